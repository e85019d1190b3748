import AuthProtocol
import Dispatch
import FIDO2
import Glibc
import SystemKit

/// A credential operation in progress: whose it is, what it is about, and
/// how long it may still take.
final class Operation: @unchecked Sendable {
    // Broker-confined, like the session and request it belongs to.
    let id: RPCID
    let session: Session
    let request: InFlightRequest
    var info: OperationInfo
    /// The user the operation is for: whose registrations, policy and
    /// agent apply. The caller's own uid, or the user a root caller acts
    /// for (`onBehalfOf`).
    let owner: uid_t

    /// How long it may take is its request's (`InFlightRequest.timeLimit`):
    /// one limit, on one clock, for the request and every call it makes.
    init(id: RPCID, session: Session, request: InFlightRequest, info: OperationInfo, owner: uid_t? = nil) {
        self.id = id
        self.session = session
        self.request = request
        self.info = info
        self.owner = owner ?? session.peer.uid
    }

    /// Time left, at least a millisecond (a timeout of 0 means "forever" to libfido2).
    var remaining: Duration { max(.milliseconds(1), request.deadline.durationFromNow) }

    /// Throws the reason the operation was cancelled, if it was.
    func checkCancelled() throws(RPCError) {
        if let reason = request.cancellation { throw reason }
    }
}

extension Broker {
    /// Waits for the key to be free and takes it; `queued` is reported while
    /// waiting. Cancelling the operation leaves the queue.
    func acquire(_ key: RegisteredKey, for operation: Operation) async throws(RPCError) {
        try operation.checkCancelled()
        if tryAcquire(key) { return }
        sendStatus(.queued, for: operation, key: key)
        let granted = await withCheckedContinuation { continuation in
            let token = keys.wait(for: key, continuation)
            operation.request.onCancel.append { [weak self] in
                self?.assumeIsolated { broker in broker.keys.leave(key.id, token: token)?.resume(returning: false) }
            }
        }
        guard granted else { throw operation.request.cancellation ?? RPCError(.cancelled, "cancelled while queued") }
        // Cancelled after the key was handed over but before this task ran
        // (the client died in between): the key is ours, so pass it on.
        do { try operation.checkCancelled() } catch {
            release(key)
            throw error
        }
    }

    /// Takes the key if it is free now, without waiting: for a look that
    /// would rather skip a key than wait for it (a silent probe, the touch
    /// race). True when taken; `release` it after.
    func tryAcquire(_ key: RegisteredKey) -> Bool { keys.take(key) }

    /// Runs `body` holding the key: waits for it (`acquire`), and hands it
    /// on (`release`) however `body` ends. Every method that uses a key
    /// goes through here, so none can forget to let it go.
    func withKey<T>(
        _ key: RegisteredKey, for operation: Operation, _ body: () async throws(RPCError) -> T
    ) async throws(RPCError) -> T {
        try await acquire(key, for: operation)
        defer { release(key) }
        return try await body()
    }

    /// Hands the key to the next operation in line, or marks it free.
    func release(_ key: RegisteredKey) {
        if let next = keys.release(key) {
            next.resume(returning: true)
        } else {
            armIdleTimer()
        }
    }

    /// Runs one libfido2 call for an operation on its key's thread, within
    /// the time the operation has left (or `within`, if sooner). The key
    /// is opened for it if it is closed; while another program has it, the
    /// call waits and the requester hears `busy`; cancelling the operation
    /// cancels the call (`fido_dev_cancel`).
    func perform<T: Sendable>(
        _ key: RegisteredKey, for operation: Operation, within limit: Duration? = nil,
        _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDOFailure) -> T {
        if key.info.isU2FOnly { return try await performPolling(key, for: operation, body) }
        do { try operation.checkCancelled() } catch { throw .cancelled(error) }
        var deadline = operation.request.deadline
        if let limit { deadline = min(deadline, .now() + .milliseconds(limit.wholeMilliseconds)) }
        do {
            return try await call(key, for: operation, until: deadline, body)
        } catch {
            // A call ended by our own cancel reports the cancellation, not
            // the key's answer to it; one ended by libfido2's timeout, the
            // request's timeout (the broker's timer may not have had its turn).
            operation.request.expireIfPastTimeLimit()
            if let reason = operation.request.cancellation { throw .cancelled(reason) }
            // Given up on just before the deadline: there was no time left
            // for another try.
            if error.isKeyBusy {
                throw .cancelled(RPCError(
                    .timeout, "\(operation.request.method): the key was in use by another program until the time ran out; close the program using it (see authkeyd(8), SHARING KEYS WITH OTHER PROGRAMS) and try again",
                    details: ["fido": .string(error.name)]))
            }
            throw .device(error)
        }
    }

    /// The one way an operation's call reaches its key's thread: cancelled
    /// with the operation, and the requester told while the key is busy.
    func call<T: Sendable>(
        _ key: RegisteredKey, for operation: Operation, until deadline: DispatchTime,
        _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDO2Error) -> T {
        let cancellation = KeyCallCancellation()
        operation.request.onCancel.append { cancellation.cancel() }
        return try await key.worker.call(until: deadline, cancellation: cancellation, whileBusy: { [weak self] holder in
            guard let self else { return }
            self.queue.async {
                self.assumeIsolated { broker in broker.keyIsBusy(key, holder: holder, for: operation) }
            }
        }, body)
    }

    /// Another program has the key an operation waits for.
    private func keyIsBusy(_ key: RegisteredKey, holder: LockHolder?, for operation: Operation) {
        guard !operation.request.isCancelled else { return }
        logger.info("key \(key.id) is in use by \(holder?.description ?? "another program"); request \(operation.id) waits for it")
        sendStatus(.busy, for: operation, key: key, holder: holder.map { Holder(pid: Int($0.pid), command: $0.command) })
    }
}

/// How a libfido2 call on behalf of an operation failed.
enum FIDOFailure: Error {
    /// The key answered with an error.
    case device(FIDO2Error)
    /// The operation was cancelled (by the client, its death, a timeout, shutdown).
    case cancelled(RPCError)

    /// The protocol error for it, as the client will see it.
    func rpcError(doing activity: String) -> RPCError {
        switch self {
        case .device(let error): return RPCError(error, doing: activity)
        case .cancelled(let reason): return reason
        }
    }
}
