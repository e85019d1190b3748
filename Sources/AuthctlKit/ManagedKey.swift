import AuthClient
import AuthProtocol

/// What every key-management subcommand shares: the key it manages, how
/// the daemon's prompts are answered (the PIN from `--pin-fd`, else the
/// terminal), and whether it prints the daemon's JSON.
struct ManagedKey: Sendable {
    let id: String
    let answers: CommandLineAnswers
    let json: Bool

    /// The options every management subcommand takes, besides its own.
    static let options: Set<String> = ["pin-fd"]

    init(_ id: String, _ arguments: Arguments) throws(UsageError) {
        self.id = id
        answers = try CommandLineAnswers(arguments)
        json = arguments.json
    }

    /// `COMMAND ACTION ID OPERAND…`, checked before connecting: the action,
    /// the key, and the operands after the key. `form` gives each action's
    /// count of operands after ID, and the options it takes.
    static func parse<Action: RawRepresentable<String>>(
        _ command: String, _ arguments: Arguments, usage: String, form: (Action) -> (operands: Int, options: Set<String>)
    ) throws(UsageError) -> (action: Action, key: ManagedKey, operands: [String]) {
        let operands = arguments.operands
        guard let word = operands.first, let action = Action(rawValue: word), operands.count == form(action).operands + 2 else {
            throw UsageError(usage)
        }
        try arguments.check("\(command) \(word)", takes: form(action).options.union(options))
        return (action, try ManagedKey(operands[1], arguments), Array(operands.dropFirst(2)))
    }

    /// Answers the prompts of the calls that follow on `client`. `cues`
    /// words the status notifications; `pinRules` the new-PIN prompts.
    func answerPrompts(
        on client: AuthClient, _ console: Console, cues: StatusCues = StatusCues(), pinRules: NewPINRules = NewPINRules(keyMinimum: nil)
    ) {
        client.setUI(CommandLineUI(answers: answers, console: console, cues: cues, newPINRules: pinRules))
    }

    /// Calls a management method. With `--json` it prints the daemon's
    /// result as it came, one line, and returns nil; else it returns the
    /// result decoded, for the command to word for people.
    func call<Params: Encodable & Sendable, Result: Decodable>(
        _ client: AuthClient, _ console: Console, _ method: String, _ params: Params, as type: Result.Type
    ) async throws(AuthClientError) -> Result? {
        let answer = try await client.call(method, params, as: JSONValue.self)
        if json {
            console.print(answer.jsonText)
            return nil
        }
        do { return try JSONValueDecoder().decode(type, from: answer) } catch {
            throw .protocolViolation("the result of \(method): \(error)")
        }
    }

    /// The params of a method that takes nothing but the key.
    var params: AuthenticatorParams { AuthenticatorParams(authenticator: id) }

    /// The key as people know it, such as `K1 (v1)`.
    func named(_ key: Authenticator) -> String {
        "\(printable(key.displayName)) (\(printable(id)))"
    }
}
