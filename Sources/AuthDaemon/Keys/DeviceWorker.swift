import FIDO2
import SystemKit

/// The thread that owns one open key. libfido2's calls block (a touch can
/// take thirty seconds), so each key gets a thread of its own, off Swift's
/// cooperative pool; jobs run one at a time, in the order they came.
/// `cancel()` reaches a blocked call from outside through `fido_dev_cancel`.
final class DeviceWorker: Sendable {
    private enum Job: Sendable {
        case run(@Sendable () -> Void)
        case stop
    }

    let name: String
    private let jobs = BlockingQueue<Job>()
    private let device = Protected<Device?>(nil)

    init(name: String) {
        self.name = name
        startThread(name: "key-\(name)") { [jobs] in
            while let job = jobs.pop(timeoutMilliseconds: -1) {
                switch job {
                case .run(let body): body()
                case .stop:
                    // What came after the stop still runs, and fails (the
                    // key is closed); what comes later is refused at once
                    // (`perform`). Either way every caller is answered: a
                    // job left in the queue would leave its caller waiting
                    // for good (LeakSanitizer found such callers of a
                    // second shutdown).
                    for case .run(let body) in jobs.closeAndTakeRemaining() { body() }
                    return
                }
            }
        }
    }

    /// Opens the key on the worker's thread.
    func open(_ opener: @escaping @Sendable () throws(FIDO2Error) -> Device) async throws(FIDO2Error) {
        let opened: Device = try await perform { () throws(FIDO2Error) -> Device in try opener() }
        device.withLock { $0 = opened }
    }

    /// Runs `body` with the open key, after the jobs queued before it.
    func run<T: Sendable>(_ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T) async throws(FIDO2Error) -> T {
        try await perform { [self] () throws(FIDO2Error) -> T in
            guard let open = device.withLock({ $0 }) else { throw Self.stopped }
            do throws(FIDO2Error) {
                return try body(open)
            } catch {
                if error.leavesTransactionOpen { resynchronise(open) }
                throw error
            }
        }
    }

    /// After a transaction that broke off (a reply lost, cut short,
    /// garbled or late), the key may still send the rest of it, and
    /// libfido2 would take that for the answer to the next request, which
    /// may be another client's. Opening the key again gives it a new
    /// CTAPHID channel (a new hidraw handle for USB keys), and libfido2
    /// drops whatever arrives on the old one.
    private func resynchronise(_ open: Device) {
        let previous = open.timeout
        open.timeout = Self.resynchroniseTimeout
        defer { open.timeout = previous }
        try? open.reopen()
    }

    /// What a call gets once the worker has stopped (as a closed key's
    /// calls do): FIDO_ERR_INVALID_ARGUMENT, as libfido2 answers a closed device.
    static let stopped = FIDO2Error(code: -7, function: "key closed")

    /// How long a key may take to open again after a broken transaction.
    static let resynchroniseTimeout: Duration = .seconds(2)

    private func perform<T: Sendable>(_ body: @escaping @Sendable () throws(FIDO2Error) -> T) async throws(FIDO2Error) -> T {
        let result: Result<T, FIDO2Error> = await withCheckedContinuation { continuation in
            let queued = jobs.push(.run {
                let outcome = Result { () throws(FIDO2Error) -> T in try body() }
                continuation.resume(returning: outcome)
            })
            if !queued { continuation.resume(returning: .failure(Self.stopped)) }
        }
        return try result.get()
    }

    /// Abandons the call in progress, if any (`fido_dev_cancel`), whoever
    /// made it: a request's own call is cancelled through its `KeyCall`.
    func cancel() {
        try? device.withLock { $0 }?.cancel()
    }

    /// Cancels what runs, closes the key and ends the thread after the
    /// queued jobs (which then fail).
    func stop() {
        cancel()
        let open = device.withLock { device -> Device? in
            defer { device = nil }
            return device
        }
        jobs.push(.run { open?.close() })
        jobs.push(.stop)
    }
}

extension FIDO2Error {
    /// libfido2 gave up on the reply (nothing, part of it, or garbage came
    /// in time) rather than the key answering with an error: the key may
    /// still be sending.
    var leavesTransactionOpen: Bool {
        self == .tx || self == .rx || self == .rxNotCbor || self == .rxInvalidCbor
    }
}
