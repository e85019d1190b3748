import AuthProtocol
import FIDO2

extension Operation {
    /// The account chooser (`ui.selectCredential`): the statement of the
    /// credential the user picks, when the key answered a request without
    /// an allow list with several (CTAP's getNextAssertion, which libfido2
    /// has already fetched). Each statement is signed over the same
    /// clientDataHash, so the choice needs the key no more.
    ///
    /// A client that answers with an id that was not offered, or with none,
    /// fails the request (`invalidParams`) rather than being asked again:
    /// that is a client's mistake, and asking again would only repeat it.
    func chooseCredential(
        from statements: [AssertionStatement], on key: RegisteredKey, in broker: isolated Broker
    ) async throws(RPCError) -> AssertionStatement {
        guard let newest = statements.first else {
            throw RPCError(.deviceError, "authenticating: the key answered without an assertion")
        }
        guard statements.count > 1 else { return newest }
        let registrations = (try? await broker.store?.registrations(for: owner)) ?? []
        let choices = statements.map { statement in
            Self.choice(for: statement, registration: registrations.first { $0.id == Base64URL.encode(statement.credentialID) })
        }
        let reply = try await prompt(
            .selectCredential(SelectCredentialPrompt(operation: info, authenticator: broker.wire(key), credentials: choices)),
            in: broker)
        guard let chosen = reply.credential else {
            throw RPCError(.invalidParams, "the answer to \(Prompt.Kind.selectCredential.method) has no credential: proceed with {credential: ID}, one of the ids offered")
        }
        guard let picked = Base64URL.decode(chosen), let statement = statements.first(where: { $0.credentialID == picked }) else {
            throw RPCError(
                .invalidParams,
                "\(Prompt.Kind.selectCredential.method) was answered with credential \"\(chosen)\", which was not offered; answer with one of \(choices.map(\.id).joined(separator: ", "))")
        }
        return statement
    }

    /// One credential as the chooser shows it: the account the key named,
    /// else the one the user registered it with.
    private static func choice(for statement: AssertionStatement, registration: Registration?) -> SelectCredentialPrompt.Credential {
        let named = statement.userName != nil || statement.userDisplayName != nil
        return SelectCredentialPrompt.Credential(
            id: Base64URL.encode(statement.credentialID),
            user: StoredCredentials.User(
                id: Base64URLBytes(statement.userID),
                name: named ? statement.userName : registration?.user.name,
                displayName: named ? statement.userDisplayName : registration?.user.displayName),
            registration: registration)
    }
}
