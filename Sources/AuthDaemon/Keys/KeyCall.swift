import Dispatch
import FIDO2
import SystemKit

/// One libfido2 call on a key's thread that can be cancelled from outside:
/// the one place that knows how a cancel reaches a blocked call, however
/// the two cross.
///
/// - Cancelled before it starts, the call does not start.
/// - Cancelled while it runs, `fido_dev_cancel` is sent now and again every
///   `cancelRepeat` until it ends: a CANCEL that reaches the key before
///   the request it is meant for is ignored by the key.
/// - The cancel reaches this call only, never the next one on the key
///   (another client's): each repeat is sent while the call is held running.
final class KeyCall: Sendable {
    /// How often a cancelled call that still runs is cancelled again.
    static let cancelRepeat: Duration = .milliseconds(100)
    /// Where the repeats are timed (not a global queue: see `QueueExecutor`).
    private static let cancelTimers = DispatchQueue(label: "authkeyd.cancel-repeat")

    private let worker: DeviceWorker
    private let state = Protected<(running: Bool, cancelled: Bool)>((false, false))

    init(on worker: DeviceWorker) { self.worker = worker }

    /// Runs `body` with the key on its thread, after the jobs queued before
    /// it; a call cancelled before its turn ends in `keepaliveCancel`
    /// without reaching the key.
    func run<T: Sendable>(_ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T) async throws(FIDO2Error) -> T {
        try await worker.run { [self] device throws(FIDO2Error) -> T in
            guard begin() else { throw FIDO2Error.keepaliveCancel }
            defer { end() }
            return try body(device)
        }
    }

    /// Stops the call: it will not start, or, running, it is cancelled
    /// until it ends. Safe from any thread, any number of times.
    func cancel() {
        let running = state.withLock { state in
            state.cancelled = true
            return state.running
        }
        if running { keepCancelling() }
    }

    private func begin() -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.running = true
            return true
        }
    }

    private func end() { state.withLock { $0.running = false } }

    /// `fido_dev_cancel` now, and again every `cancelRepeat` while the call
    /// runs. The lock is held while the cancel is sent, so `end()` waits
    /// for it and the CANCEL cannot reach a later call.
    private func keepCancelling() {
        let sent = state.withLock { state -> Bool in
            guard state.running else { return false }
            worker.cancel()
            return true
        }
        guard sent else { return }
        Self.cancelTimers.asyncAfter(deadline: .now() + .milliseconds(Self.cancelRepeat.wholeMilliseconds)) { [self] in
            keepCancelling()
        }
    }
}
