import AuthProtocol

/// Who answers a prompt, and what happens when nobody does. A client says
/// in `hello` (`ui`) which prompts it answers; the others go to its user's
/// agent (`agent.register`), and with no agent the daemon goes on with the
/// documented default (authkeyd-protocol(7), "Prompts a client does not
/// answer") instead of sending them.
enum PromptAnswerer {
    /// The client that made the request.
    case requester
    /// Its user's session agent.
    case agent(Session)
    /// No one: the default applies.
    case nobody

    /// The answer the daemon assumes for a prompt nobody can answer: the
    /// choice a user without a way to be asked would get, or an error that
    /// says why the request cannot go on without one. Never a wait.
    static func defaultAnswer(to prompt: Prompt) throws(RPCError) -> PromptReply {
        let declined = "this client does not answer \(prompt.kind.method) and its user has no agent"
        switch prompt {
        case .selectAuthenticator:
            // Every key blinks; the one the user touches serves.
            return PromptReply(action: .proceed, touch: true)
        case .describeAuthenticator:
            // The key keeps the name it has, or stays unnamed.
            return .proceed
        case .selectCredential(let chooser):
            // The newest, as the key lists them: what a client got before the chooser.
            return PromptReply(action: .proceed, credential: chooser.credentials.first?.id)
        case .enterPin:
            throw RPCError(
                .pinRequired,
                "no one can be asked for the PIN: start authctl agent (\(declined)); or answer ui.enterPin, or use a key without a PIN")
        case .confirmTransaction:
            // Signing details nobody was shown would defeat the transaction.
            throw RPCError(
                .unsupported,
                "no one can confirm the transaction: start authctl agent (\(declined)); nothing was signed. Answer ui.confirmTransaction, or leave transaction out")
        }
    }
}

extension Broker {
    /// The prompts of `hello`'s `ui` list; a name that is no prompt's is
    /// refused, so that a misspelt prompt is not silently left unanswered.
    func answeredPrompts(_ names: [String]) throws(RPCError) -> Set<Prompt.Kind> {
        var prompts = Set<Prompt.Kind>()
        for (index, name) in names.enumerated() {
            guard let prompt = Prompt.Kind(rawValue: name) else {
                let known = Prompt.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw RPCError(.invalidParams, "invalid params: ui[\(index)]: \"\(name)\" is no prompt; the prompts are \(known)")
            }
            prompts.insert(prompt)
        }
        return prompts
    }
}

extension Operation {
    /// Who answers `prompt` for the operation: the one place that decides.
    /// The requester when it declared the prompt, else its user's agent
    /// when one is registered and answers it, else nobody.
    func answerer(of prompt: Prompt.Kind, in broker: isolated Broker) -> PromptAnswerer {
        if session.answeredPrompts.contains(prompt) { return .requester }
        if let agent = agent(in: broker), agent.answeredPrompts.contains(prompt) { return .agent(agent) }
        return .nobody
    }
}
