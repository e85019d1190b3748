import Glibc
import SystemKit

/// The fuzz targets, by the names `scripts/fuzz` and the corpus folders
/// (`Fuzz/corpus/<name>`, `Fuzz/crashes/<name>`) use.
public enum FuzzTarget: String, CaseIterable, Codable, Sendable {
    /// A client's bytes through framing, JSON-RPC and the wire types.
    case `protocol`
    /// HID reports and CTAP2 requests into the virtual key.
    case virtualkey
    /// Device replies through libfido2 into the FIDO2 wrappers.
    case devicereplies
    /// A pam_u2f authfile, read and added to as pam_authkeyd and `authctl pam register` do.
    case pamauthfile
    /// The daemon's lines into `authctl agent`: prompts and notifications.
    case agent

    /// Runs one input; returns only if the code under test coped with it.
    public func run(_ data: [UInt8]) {
        switch self {
        case .protocol: fuzzProtocol(data)
        case .virtualkey: fuzzVirtualKey(data)
        case .devicereplies: fuzzDeviceReplies(data)
        case .pamauthfile: fuzzPAMAuthFile(data)
        case .agent: fuzzAgent(data)
        }
    }

    /// Meaningful starting inputs, named for the files they are kept in.
    public func seeds() -> [(name: String, input: [UInt8])] {
        switch self {
        case .protocol: return ProtocolSeeds.all()
        case .virtualkey: return VirtualKeySeeds.all()
        case .devicereplies: return DeviceReplySeeds.all()
        case .pamauthfile: return PAMAuthFileSeeds.all()
        case .agent: return AgentSeeds.all()
        }
    }

    /// The target AUTHKEYD_FUZZ_TARGET names, for the libFuzzer binary;
    /// without one, the process ends with a usage message.
    public static func fromEnvironment() -> FuzzTarget {
        let name = environmentVariable("AUTHKEYD_FUZZ_TARGET") ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            writeToStandardError("authkeyd-fuzz: set AUTHKEYD_FUZZ_TARGET to one of: \(allNames)\n")
            exit(64)
        }
        return target
    }

    static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The executable's command line when it is not built for libFuzzer:
    ///
    ///     authkeyd-fuzz TARGET PATH...        replay files (and the files in folders)
    ///     authkeyd-fuzz --seeds TARGET FOLDER  write the seed inputs into FOLDER
    public static func commandLine(_ arguments: [String]) -> Int32 {
        let usage = "usage: authkeyd-fuzz TARGET PATH... | --seeds TARGET FOLDER   (targets: \(allNames))"
        if arguments.first == "--seeds", arguments.count == 3, let target = FuzzTarget(rawValue: arguments[1]) {
            for (name, input) in target.seeds() {
                do { try AtomicFile.write(input, to: "\(arguments[2])/\(name)", permissions: 0o644) } catch {
                    print("authkeyd-fuzz: cannot write \(arguments[2])/\(name): \(error)")
                    return 1
                }
            }
            print("wrote \(target.seeds().count) seeds into \(arguments[2])")
            return 0
        }
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print(usage)
            return 64
        }
        var count = 0
        for path in arguments.dropFirst() {
            for file in inputFiles(at: path) {
                guard let data = readInput(file) else {
                    print("authkeyd-fuzz: cannot read \(file)")
                    return 1
                }
                target.run(data)
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs ran without a crash")
        return 0
    }
}

// MARK: - Files

/// The bytes of an input file; nil when it cannot be read.
public func readInput(_ path: String) -> [UInt8]? {
    (try? AtomicFile.read(path)) ?? nil
}

/// `path` itself, or the regular files in the folder `path`, sorted.
public func inputFiles(at path: String) -> [String] {
    guard let names = directoryNames(path) else { return [path] }
    return names.filter { !$0.hasPrefix(".") }.map { "\(path)/\($0)" }.filter(FileSystem.isRegularFile).sorted()
}

