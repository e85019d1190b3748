import AuthProtocol
import Dispatch
import FIDO2
import SystemKit

/// Who won a touch-to-select race, shared by the key workers running it.
final class TouchRace: Sendable {
    private let state = Protected<(winner: String?, over: Bool)>((nil, false))

    /// The first key to claim the touch wins; later claims lose.
    func claim(_ id: String) -> Bool {
        state.withLock { state in
            guard !state.over else { return false }
            state = (id, true)
            return true
        }
    }

    func end() { state.withLock { $0.over = true } }
    var isOver: Bool { state.withLock { $0.over } }
    var winner: String? { state.withLock { $0.winner } }
}

extension Broker {
    static let defaultSelectTimeout: Duration = .seconds(30)

    /// `authenticators.select`: every present key blinks (libfido2's
    /// touch request); the first touched is the answer, the others are
    /// cancelled.
    func selectByTouch(_ params: JSONValue?, id: RPCID, session: Session) throws(RPCError) -> Handling {
        let timeout = try decode(SelectParams.self, params).timeout.map { Duration.milliseconds($0) }
            ?? min(Self.defaultSelectTimeout, configuration.requestTimeout)
        guard timeout > .zero else { throw RPCError(.invalidParams, "invalid params: timeout must be positive") }
        let candidates = orderedKeys
        guard !candidates.isEmpty else { throw RPCError(.noAuthenticator, "no security key is present") }
        return try start(Method.selectAuthenticator, id: id, session: session) { [self] request throws(RPCError) in
            sendStatus(.selectingByTouch, request: id, key: nil, to: session)
            guard let winner = try await race(candidates, timeout: timeout, request: request) else {
                throw request.cancellation ?? RPCError(.timeout, "no key was touched within \(timeout)")
            }
            return encode(AuthenticatorEvent(authenticator: wire(winner)))
        }
    }

    /// Runs the touch race on every candidate's worker; returns the touched
    /// key, or nil on timeout or cancel. The keys pass their queues as every
    /// use does: one that another request holds sits the race out (a touch
    /// on it answers that request), and one another program has is not
    /// waited for.
    func race(_ candidates: [RegisteredKey], timeout: Duration, request: InFlightRequest) async throws(RPCError) -> RegisteredKey? {
        let racing = candidates.filter(tryAcquire)
        defer { racing.forEach(release) }
        guard !racing.isEmpty else {
            throw RPCError(.busy, "every key is in use by another request; try again when it is done")
        }
        let race = TouchRace()
        request.onCancel.append { race.end() }
        let deadline = ContinuousClock.now + timeout
        let callDeadline = DispatchTime.now() + .milliseconds(timeout.wholeMilliseconds)
        await withTaskGroup(of: Void.self) { group in
            for key in racing {
                let cancellation = KeyCallCancellation()
                request.onCancel.append { cancellation.cancel() }
                group.addTask {
                    _ = try? await key.worker.call(until: callDeadline, cancellation: cancellation) { device throws(FIDO2Error) in
                        try Self.awaitTouch(on: device, id: key.id, race: race, deadline: deadline)
                    }
                }
            }
        }
        return race.winner.flatMap { id in candidates.first { $0.id == id } }
    }

    /// On one key's worker: ask for a touch, poll for it, and when another
    /// key won (or time ran out) cancel and collect the key's answer to the
    /// cancel, so that its next request does not read a stale reply.
    nonisolated static func awaitTouch(on device: Device, id: String, race: TouchRace, deadline: ContinuousClock.Instant) throws(FIDO2Error) {
        try device.touchBegin()
        while !race.isOver && ContinuousClock.now < deadline {
            if try device.touchStatus(timeout: .milliseconds(50)) {
                _ = race.claim(id)
                return
            }
        }
        race.end()
        // A U2F key cannot be cancelled and answers every poll, each of
        // which asked again: closed, its worker opens it on a new channel
        // next time, and its last answer is left behind.
        if !device.isFIDO2 {
            device.close()
            return
        }
        try? device.cancel()
        for _ in 0..<10 {
            do {
                if try device.touchStatus(timeout: .milliseconds(100)) { return }
            } catch {
                return
            }
        }
    }
}
