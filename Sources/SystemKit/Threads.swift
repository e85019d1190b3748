internal import CSystem
import Glibc

/// Starts a detached thread running `body`: for loops that block in system
/// calls, which must stay off Swift's cooperative pool and off Dispatch's
/// limited worker threads.
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        // Linux limits thread names to 15 bytes.
        _ = authkeyd_set_thread_name(String(box.name.prefix(15)))
        box.body()
        return nil
    }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    pthread_detach(thread)
}
