// authkeyd-fuzz: the fuzz targets (Sources/FuzzTargets) as one executable.
//
// Built with `-D FUZZING` and `--sanitize=fuzzer` (scripts/fuzz), it is a
// libFuzzer binary; AUTHKEYD_FUZZ_TARGET names the target it fuzzes.
// Built normally, it replays inputs: `authkeyd-fuzz TARGET PATH...`.
import FuzzTargets
import Glibc

#if FUZZING

private let target = FuzzTarget.fromEnvironment()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
@main
enum Replay {
    static func main() {
        exit(FuzzTarget.commandLine(Array(CommandLine.arguments.dropFirst())))
    }
}
#endif
