import FuzzTargets
import Glibc
import TestSupport
import Testing

/// Every input the fuzzers kept (Fuzz/corpus/<target>) and every input that
/// once crashed them (Fuzz/crashes/<target>), run through the same target
/// functions as the fuzzers, in the ordinary build: a fixed bug stays fixed,
/// and the harnesses keep working between fuzzing runs.
///
/// The inputs run in a child process (an exit test), one per folder: an
/// input that crashes again fails its test, names itself, and leaves the
/// other tests running.
@Suite struct FuzzRegressionTests {
    /// Fuzz/, found from this file: Tests/FuzzRegressionTests/ → ../../Fuzz.
    static let fuzzDirectory: String = {
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        return components.joined(separator: "/") + "/Fuzz"
    }()

    @Test(arguments: FuzzTarget.allCases)
    func corpus(_ target: FuzzTarget) async throws {
        let inputs = try Self.inputs(in: "corpus/\(target.rawValue)")
        #expect(!inputs.isEmpty, "Fuzz/corpus/\(target.rawValue) is empty")
        await Self.expectNoCrash(target, inputs)
    }

    /// Empty while no bug is open: libFuzzer writes here, and an input stays
    /// once its bug is fixed.
    @Test(arguments: FuzzTarget.allCases)
    func crashes(_ target: FuzzTarget) async throws {
        await Self.expectNoCrash(target, try Self.inputs(in: "crashes/\(target.rawValue)"))
    }

    /// The seeds still build and run: the harnesses and the code under test still agree.
    @Test(arguments: FuzzTarget.allCases)
    func seeds(_ target: FuzzTarget) async {
        let seeds = target.seeds()
        #expect(!seeds.isEmpty)
        await Self.expectNoCrash(target, seeds.map { Input(name: "seed \($0.name)", bytes: $0.input) })
    }

    /// Fuzz/known-issues/devicereplies holds device replies on which libcbor
    /// 0.8 allocates gigabytes (a flaw of Debian 12's libcbor, not ours). The
    /// harness withholds such replies; these inputs check that it still
    /// recognises them, in a child process with its address space capped, so
    /// that a harness that stopped recognising them fails here instead of
    /// zeroing 2 GiB of memory.
    @Test func libcborAllocationsAreWithheld() async throws {
        let inputs = try Self.inputs(in: "known-issues/devicereplies")
        #expect(!inputs.isEmpty, "Fuzz/known-issues/devicereplies is empty")
        for input in inputs {
            await #expect(processExitsWith: .success, "the devicereplies harness sent \(input.name) to libfido2") {
                [input = input as Input] in
                // 1 GiB: the replies ask for 2 GiB and 20 GB; a debug test
                // process needs far less. Not under a sanitizer, whose shadow
                // memory alone is terabytes of address space.
                if !runningUnderSanitizer {
                    var limit = rlimit(rlim_cur: 1 << 30, rlim_max: 1 << 30)
                    guard setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0 else { exit(4) }
                }
                if fuzzDeviceReplies(input.bytes) == 0 { exit(3) }
            }
        }
    }

    // MARK: - Inputs

    /// An input and the name a failure calls it by.
    struct Input: Codable, Sendable {
        var name: String
        var bytes: [UInt8]
    }

    /// The input files in Fuzz/`folder`; the folder must exist (git keeps
    /// an empty one by its .gitkeep), or a moved folder would pass unseen.
    static func inputs(in folder: String) throws -> [Input] {
        let path = "\(fuzzDirectory)/\(folder)"
        var status = stat()
        try #require(stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR, "\(path) is not a folder")
        return try inputFiles(at: path).map { file in
            Input(name: "Fuzz/\(folder)/\(file.split(separator: "/").last ?? "")",
                  bytes: try #require(readInput(file), "cannot read \(file)"))
        }
    }

    /// Runs the inputs through `target` in a child process, which names each
    /// input before running it; a failure names the input and quotes the
    /// child's last words.
    static func expectNoCrash(_ target: FuzzTarget, _ inputs: [Input]) async {
        guard !inputs.isEmpty else { return }
        let log = ChildLog()
        defer { log.remove() }
        let passed = await #expect(processExitsWith: .success, "an input crashes the \(target.rawValue) target") {
            [target = target as FuzzTarget, inputs = inputs as [Input], path = log.path as String] in
            ChildLog.redirectStandardError(to: path)
            for input in inputs {
                ChildLog.note("replaying \(input.name)")
                target.run(input.bytes)
            }
        } != nil
        guard !passed else { return }
        let lines = log.lines
        let culprit = lines.last { $0.hasPrefix("replaying ") }?.dropFirst("replaying ".count) ?? "no input (it stopped before the first)"
        // The runtime's or a sanitizer's own words, not the backtrace under them.
        let words = lines.filter { !$0.hasPrefix("replaying ") }
        let headlines = words.filter { $0.contains("Fatal error") || $0.contains("crashed:") || $0.contains("ERROR") }
        let cause = (headlines.isEmpty ? Array(words.prefix(5)) : headlines).joined(separator: "\n")
        let replay = culprit.hasPrefix("Fuzz/") ? "\nreplay: swift run authkeyd-fuzz \(target.rawValue) \(culprit)" : ""
        Issue.record("\(culprit) crashes the \(target.rawValue) target:\n\(cause)\(replay)")
    }
}
