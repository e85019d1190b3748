/// The session agent (authkeyd-protocol(7), "Agents"): a connection that
/// answers the prompts of its user's requesters that cannot answer them
/// themselves, as polkit's authentication agents and gpg-agent's pinentry do.

/// Who made a request, as the kernel tells the daemon (`SO_PEERCRED`,
/// `/proc/PID/comm`): what an agent shows so that the user knows which
/// program wants their key. Sent to agents only, in `operation.requester`.
public struct Requester: Codable, Sendable, Equatable {
    public var pid: Int
    public var uid: Int
    /// The process's name (`/proc/PID/comm`), such as `sudo` or `ssh-sk-helper`.
    public var command: String
    /// The name the client gave in `hello`, if it gave one.
    public var client: String?

    public init(pid: Int, uid: Int, command: String, client: String? = nil) {
        self.pid = pid
        self.uid = uid
        self.command = command
        self.client = client
    }
}

/// `agent.register`'s params: `{callback?, token?}`, both or neither.
/// With them the agent need not stay connected: the daemon may exit when
/// idle, and calls the agent back at `callback` when a prompt needs it
/// (`AgentCallback`). Without them the agent's connection keeps the
/// daemon running, as before callbacks.
public struct AgentRegisterParams: Codable, Sendable, Equatable {
    /// The abstract Unix socket the agent listens on (`AgentCallback.name`).
    public var callback: String?
    /// What the daemon says first when it calls, so that the agent knows it
    /// is the daemon (`AgentCallback.token`).
    public var token: String?

    public init(callback: String? = nil, token: String? = nil) {
        self.callback = callback
        self.token = token
    }
}

/// `agent.register`'s and `agent.unregister`'s result: whether this
/// connection is now its user's agent.
public struct AgentRegistration: Codable, Sendable, Equatable {
    public var registered: Bool
    /// The user whose requests the agent answers.
    public var uid: Int?
    /// With a callback registered: true when the daemon keeps it, and so
    /// may exit when idle and call the agent back; false when it does not
    /// (`callbackError` says why), and the connection keeps it running.
    public var callback: Bool?
    /// Why the daemon does not keep the callback.
    public var callbackError: String?

    public init(registered: Bool, uid: Int? = nil, callback: Bool? = nil, callbackError: String? = nil) {
        self.registered = registered
        self.uid = uid
        self.callback = callback
        self.callbackError = callbackError
    }
}

/// `agent.replaced`: a newer agent registered for the same user; this
/// connection is no longer asked (prompts it already holds stay its own).
/// Sent over a callback connection too, to an agent that was not
/// connected, with its `token`; the connection then closes.
public struct AgentReplaced: Codable, Sendable, Equatable {
    /// The new agent's process.
    public var pid: Int
    /// On a callback connection only: the token the agent registered.
    public var token: String?

    public init(pid: Int, token: String? = nil) {
        self.pid = pid
        self.token = token
    }
}

/// `agent.callback`: the daemon's first line on a connection it made to
/// an agent's callback socket: it needs the agent (a prompt or a status of
/// its user's is coming), and proves who it is with the agent's token. The
/// agent answers as on any connection of its own: `hello`, then
/// `agent.register`.
public struct AgentCallbackNotice: Codable, Sendable, Equatable {
    public var token: String

    public init(token: String) { self.token = token }
}

/// `operation.cancelled`, to an agent: a request it was shown ended
/// without finishing (its requester went away or cancelled it, it timed
/// out, the daemon stops): drop its prompt. `request` is the agent's name
/// for the request, as in the prompts' `operation.request`.
public struct OperationCancelled: Codable, Sendable, Equatable {
    public var request: JSONValue
    /// The error reason the requester got, such as `cancelled` or `timeout`.
    public var reason: ErrorReason
    public var message: String

    public init(request: JSONValue, reason: ErrorReason, message: String) {
        self.request = request
        self.reason = reason
        self.message = message
    }
}

/// `operation.finished`, to an agent: a request it was shown is over, and
/// how (its requester has the result; the agent gets none of it).
public struct OperationFinished: Codable, Sendable, Equatable {
    public var request: JSONValue
    public var succeeded: Bool
    /// Why it failed, when it did.
    public var reason: ErrorReason?
    public var message: String?

    public init(request: JSONValue, succeeded: Bool, reason: ErrorReason? = nil, message: String? = nil) {
        self.request = request
        self.succeeded = succeeded
        self.reason = reason
        self.message = message
    }
}
