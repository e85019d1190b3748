import AuthProtocol
import Dispatch
import FIDO2
import SystemKit

extension Operation {
    /// Waits for the key to be free and takes it; `queued` is reported while
    /// waiting. Cancelling the operation leaves the queue.
    func acquire(_ key: RegisteredKey, in broker: isolated Broker) async throws(RPCError) {
        try checkCancelled()
        if broker.tryAcquire(key) { return }
        sendStatus(.queued, key: key, in: broker)
        let granted = await withCheckedContinuation { continuation in
            let token = broker.keys.wait(for: key, continuation)
            request.onCancel.append { [weak broker] in
                broker?.assumeIsolated { broker in broker.keys.leave(key.id, token: token)?.resume(returning: false) }
            }
        }
        guard granted else { throw request.cancellation ?? RPCError(.cancelled, "cancelled while queued") }
        // Cancelled after the key was handed over but before this task ran
        // (the client died in between): the key is ours, so pass it on.
        do { try checkCancelled() } catch {
            broker.release(key)
            throw error
        }
    }

    /// Runs `body` holding the key: waits for it (`acquire`), and hands it
    /// on (`Broker.release`) however `body` ends. Every method that uses a
    /// key goes through here, so none can forget to let it go.
    func withKey<T>(
        _ key: RegisteredKey, in broker: isolated Broker, _ body: () async throws(RPCError) -> T
    ) async throws(RPCError) -> T {
        try await acquire(key, in: broker)
        defer { broker.release(key) }
        return try await body()
    }

    /// Runs one libfido2 call for the operation on its key's thread, within
    /// the time the operation has left (or `within`, if sooner). The key
    /// is opened for it if it is closed; while another program has it, the
    /// call waits and the requester hears `busy`; cancelling the operation
    /// cancels the call (`fido_dev_cancel`).
    func perform<T: Sendable>(
        _ key: RegisteredKey, within limit: Duration? = nil, in broker: isolated Broker,
        _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDOFailure) -> T {
        if key.info.isU2FOnly { return try await performPolling(key, in: broker, body) }
        do { try checkCancelled() } catch { throw .cancelled(error) }
        var deadline = request.deadline
        if let limit { deadline = min(deadline, .now() + .milliseconds(limit.wholeMilliseconds)) }
        do {
            return try await call(key, until: deadline, in: broker, body)
        } catch {
            // A call ended by our own cancel reports the cancellation, not
            // the key's answer to it; one ended by libfido2's timeout, the
            // request's timeout (the broker's timer may not have had its turn).
            request.expireIfPastTimeLimit()
            if let reason = request.cancellation { throw .cancelled(reason) }
            // Given up on just before the deadline: there was no time left
            // for another try.
            if error.isKeyBusy {
                throw .cancelled(RPCError(
                    .timeout, "\(request.method): the key was in use by another program until the time ran out; close the program using it (see authkeyd(8), SHARING KEYS WITH OTHER PROGRAMS) and try again",
                    details: ["fido": .string(error.name)]))
            }
            throw .device(error)
        }
    }

    /// `perform`, with its failure turned into the protocol's error.
    func perform<T: Sendable>(
        _ key: RegisteredKey, in broker: isolated Broker, _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T,
        mapError: (FIDOFailure) -> RPCError
    ) async throws(RPCError) -> T {
        do { return try await perform(key, in: broker, body) } catch { throw mapError(error) }
    }

    /// The one way the operation's call reaches its key's thread: cancelled
    /// with the operation, and the requester told while the key is busy.
    func call<T: Sendable>(
        _ key: RegisteredKey, until deadline: DispatchTime, in broker: isolated Broker,
        _ body: @escaping @Sendable (Device) throws(FIDO2Error) -> T
    ) async throws(FIDO2Error) -> T {
        let cancellation = KeyCallCancellation()
        request.onCancel.append { cancellation.cancel() }
        return try await key.worker.call(until: deadline, cancellation: cancellation, whileBusy: { [weak broker, self] holder in
            guard let broker else { return }
            broker.queue.async {
                broker.assumeIsolated { broker in self.keyIsBusy(key, holder: holder, in: broker) }
            }
        }, body)
    }

    /// Another program has the key the operation waits for.
    private func keyIsBusy(_ key: RegisteredKey, holder: LockHolder?, in broker: isolated Broker) {
        guard !request.isCancelled else { return }
        broker.logger.info("key \(key.id) is in use by \(holder?.description ?? "another program"); request \(id) waits for it")
        sendStatus(.busy, key: key, holder: holder.map { Holder(pid: Int($0.pid), command: $0.command) }, in: broker)
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
