import AuthClient
import AuthProtocol
import SystemKit

/// One connection of a session agent's: say hello, register as the user's
/// agent (with the callback, if it has one), answer the prompts the daemon
/// sends through the front end (each in a task that `operation.cancelled`
/// cancels), pass on statuses and notices, until the agent is replaced,
/// the daemon goes, or (`once`) the first request it was shown ends.
struct AgentLoop: Sendable {
    enum Ending: Equatable {
        /// Another agent, process `pid`, took over.
        case replaced(pid: Int)
        /// The connection ended: the daemon stopped or went away.
        /// `callsBack`: it kept the agent's callback, and calls it back
        /// when it needs it; `idle`: it said it exits for having nothing
        /// to do.
        case daemonGone(callsBack: Bool, idle: Bool)
        /// `once`: the first request shown ended, and how.
        case served(succeeded: Bool)
    }

    let client: AuthClient
    let frontEnd: any AgentFrontEnd
    let once: Bool
    /// What `agent.register` is given: the callback, or nothing.
    var callback = AgentRegisterParams()
    /// The daemon called this connection back: the agent registered before.
    var calledBack = false

    func run() async throws(AuthClientError) -> Ending {
        let prompts = PromptTasks()
        let first = Protected<JSONValue?>(nil)
        let noteShown: @Sendable (JSONValue) -> Void = { request in first.withLock { if $0 == nil { $0 = request } } }
        let frontEnd = frontEnd
        client.setStatusObserver { status in
            noteShown(status.request)
            frontEnd.statusChanged(status)
        }
        let answer = AuthClient.requestHandler(answering: frontEnd)
        client.setRequestHandler { method, params in
            let request = params["operation"]?["request"] ?? .null
            noteShown(request)
            return await prompts.run(for: request) { await answer(method, params) }
        }
        _ = try await client.hello(client: "authctl-agent/\(authctlVersion)", ui: frontEnd)
        let registration = try await client.registerAgent(callback)
        if calledBack {
            frontEnd.notice("authkeyd called this agent back")
        } else {
            frontEnd.registered(uid: registration.uid ?? -1)
        }
        if let refusal = registration.callbackError { frontEnd.notice(printable(refusal)) }
        let callsBack = registration.callback == true
        var idle = false

        let decoder = JSONValueDecoder()
        for await notification in client.notifications {
            switch notification.method {
            case Method.agentReplaced:
                guard let replaced = try? decoder.decode(AgentReplaced.self, from: notification.params) else { continue }
                frontEnd.replaced(by: replaced.pid)
                return .replaced(pid: replaced.pid)
            case Method.operationCancelled:
                guard let notice = try? decoder.decode(OperationCancelled.self, from: notification.params) else { continue }
                prompts.cancel(notice.request)
                frontEnd.cancelled(notice)
                if once && first.withLock({ $0 }) == notice.request { return .served(succeeded: false) }
            case Method.operationFinished:
                guard let notice = try? decoder.decode(OperationFinished.self, from: notification.params) else { continue }
                frontEnd.finished(notice)
                if once && first.withLock({ $0 }) == notice.request { return .served(succeeded: notice.succeeded) }
            case Method.shuttingDown:
                idle = (try? decoder.decode(ShuttingDown.self, from: notification.params))?.idle == true
            default:
                // Statuses reach the observer; nothing else is for an agent.
                continue
            }
        }
        return .daemonGone(callsBack: callsBack, idle: idle)
    }
}
