/// What register and assert print: a summary for people, the daemon's
/// JSON, or the lines fido2-tools verify.
enum OutputFormat: Sendable {
    case summary
    case json
    case fido2Tools

    init(_ arguments: Arguments) throws(UsageError) {
        let format = try arguments.choice("format", of: ["fido2-tools"], default: "")
        switch (arguments.json, format) {
        case (true, "fido2-tools"): throw UsageError("--json and --format fido2-tools are two different outputs: choose one")
        case (_, "fido2-tools"): self = .fido2Tools
        case (true, _): self = .json
        default: self = .summary
        }
    }
}
