import AuthProtocol

/// Who answers a prompt, and what happens when nobody does. A client says
/// in `hello` (`ui`) which prompts it answers; for the others the daemon
/// goes on with the documented default (authkeyd-protocol(7), "Prompts a
/// client does not answer") instead of sending them.
extension Broker {
    /// The prompts of `hello`'s `ui` list; a name that is no prompt's is
    /// refused, so that a misspelt prompt is not silently left unanswered.
    func answeredPrompts(_ names: [String]) throws(RPCError) -> Set<String> {
        var prompts = Set<String>()
        for (index, name) in names.enumerated() {
            guard let prompt = Prompt.named(name) else {
                let known = Prompt.all.map(Prompt.name(of:)).joined(separator: ", ")
                throw RPCError(.invalidParams, "invalid params: ui[\(index)]: \"\(name)\" is no prompt; the prompts are \(known)")
            }
            prompts.insert(prompt)
        }
        return prompts
    }

    /// Whether `prompt` can be asked for `operation`: the one place that
    /// decides. Today only the client that made the request answers, and
    /// only the prompts it declared.
    func canAnswer(_ prompt: String, for operation: Operation) -> Bool {
        operation.session.answeredPrompts.contains(prompt)
    }

    /// The answer the daemon assumes for a prompt nobody can answer: the
    /// choice a user without a way to be asked would get, or an error that
    /// says why the request cannot go on without one.
    func defaultAnswer(to prompt: String, _ params: some Encodable) throws(RPCError) -> PromptReply {
        let declined = "this client does not answer \(prompt) (its hello ui list leaves it out)"
        switch prompt {
        case Prompt.selectAuthenticator:
            // Every key blinks; the one the user touches serves.
            return PromptReply(action: .proceed, touch: true)
        case Prompt.describeAuthenticator:
            // The key keeps the name it has, or stays unnamed.
            return .proceed
        case Prompt.selectCredential:
            // The newest, as the key lists them: what a client got before the chooser.
            return PromptReply(action: .proceed, credential: (params as? SelectCredentialPrompt)?.credentials.first?.id)
        case Prompt.enterPin:
            throw RPCError(.pinRequired, "\(declined), and the request needs the key's PIN; answer ui.enterPin, or use a key without a PIN")
        case Prompt.confirmTransaction:
            // Signing details nobody was shown would defeat the transaction.
            throw RPCError(
                .unsupported, "\(declined), so nobody can confirm the transaction; nothing was signed. Answer ui.confirmTransaction, or leave transaction out")
        default:
            throw RPCError(.unsupported, "\(declined)")
        }
    }
}
