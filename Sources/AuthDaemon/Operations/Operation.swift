import AuthProtocol
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
    let deadline: ContinuousClock.Instant
    /// The user the operation is for: whose registrations, policy and
    /// agent apply. The caller's own uid, or the user a root caller acts
    /// for (`onBehalfOf`).
    let owner: uid_t

    init(id: RPCID, session: Session, request: InFlightRequest, info: OperationInfo, timeout: Duration, owner: uid_t? = nil) {
        self.id = id
        self.session = session
        self.request = request
        self.info = info
        deadline = ContinuousClock.now + timeout
        self.owner = owner ?? session.peer.uid
    }

    /// Time left, at least a millisecond (a timeout of 0 means "forever" to libfido2).
    var remaining: Duration { max(.milliseconds(1), deadline - .now) }

    /// Throws the reason the operation was cancelled, if it was.
    func checkCancelled() throws(RPCError) {
        if let reason = request.cancellation { throw reason }
    }
}

/// One key's queue of operations: it serves one at a time, the others wait
/// in the order they came (PROTOCOL.md: `queued`).
struct KeyQueue {
    var busy = false
    var waiting: [(token: Int, continuation: CheckedContinuation<Bool, Never>)] = []
}

extension Broker {
    /// Waits for the key to be free and takes it; `queued` is reported while
    /// waiting. Cancelling the operation leaves the queue.
    func acquire(_ key: RegisteredKey, for operation: Operation) async throws(RPCError) {
        try operation.checkCancelled()
        if keyQueues[key.id, default: KeyQueue()].busy == false {
            keyQueues[key.id, default: KeyQueue()].busy = true
            return
        }
        sendStatus(.queued, for: operation, key: key)
        let token = nextQueueToken
        nextQueueToken += 1
        let granted = await withCheckedContinuation { continuation in
            keyQueues[key.id, default: KeyQueue()].waiting.append((token, continuation))
            operation.request.onCancel.append { [weak self] in
                self?.assumeIsolated { broker in broker.leaveQueue(key.id, token: token) }
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

    private func leaveQueue(_ keyID: String, token: Int) {
        guard let index = keyQueues[keyID]?.waiting.firstIndex(where: { $0.token == token }) else { return }
        let waiter = keyQueues[keyID]!.waiting.remove(at: index)
        waiter.continuation.resume(returning: false)
    }

    /// Hands the key to the next operation in line, or marks it free.
    func release(_ key: RegisteredKey) {
        guard var queue = keyQueues[key.id] else { return }
        if queue.waiting.isEmpty {
            queue.busy = false
            keyQueues[key.id] = queue
            armIdleTimer()
        } else {
            let next = queue.waiting.removeFirst()
            keyQueues[key.id] = queue
            next.continuation.resume(returning: true)
        }
    }

    /// Runs one libfido2 call for an operation on its key's thread, within
    /// the time the operation has left; cancelling the operation cancels
    /// the call (`fido_dev_cancel`).
    func perform<T: Sendable>(
        _ key: RegisteredKey, for operation: Operation, _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDOFailure) -> T {
        if key.info.isU2FOnly { return try await performPolling(key, for: operation, body) }
        do { try operation.checkCancelled() } catch { throw .cancelled(error) }
        let timeout = operation.remaining
        do {
            return try await call(key, for: operation.request) { device throws(FIDO2Error) -> T in
                device.timeout = timeout
                defer { device.timeout = Device.defaultTimeout }
                return try body(device)
            }
        } catch {
            // A call ended by our own cancel reports the cancellation, not
            // the key's answer to it; one ended by libfido2's timeout, the
            // request's timeout (the broker's timer may not have had its turn).
            operation.request.expireIfPastTimeLimit()
            if let reason = operation.request.cancellation { throw .cancelled(reason) }
            throw .device(error)
        }
    }

    /// Runs one libfido2 call for `request` on the key's thread; cancelling
    /// the request stops the call (`KeyCall` says how).
    func call<T: Sendable>(
        _ key: RegisteredKey, for request: InFlightRequest, _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDO2Error) -> T {
        let call = KeyCall(on: key.worker)
        request.onCancel.append { call.cancel() }
        return try await call.run(body)
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
