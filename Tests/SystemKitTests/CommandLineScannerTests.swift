import SystemKit
import Testing

/// The words the three programs read their command lines as.
@Suite struct CommandLineScannerTests {
    private func words(_ arguments: [String]) -> [CommandLineWord] {
        var scanner = CommandLineScanner(arguments)
        return Array(sequence(state: ()) { _ in scanner.next() })
    }

    @Test func optionsSplitAtTheFirstEqualsSign() {
        #expect(words(["--name=a=b", "--flag", "-h", "list", "--", "--="]) == [
            .option("name", value: "a=b"), .option("flag", value: nil), .other("-h"), .other("list"),
            .option("", value: nil), .option("", value: ""),
        ])
    }

    @Test func aValueIsGivenAfterTheEqualsSignOrIsTheNextWordWhateverItIs() {
        var scanner = CommandLineScanner(["--pin", "--1234", "--name=x", "--socket"])
        guard case .option("pin", let given) = scanner.next() else { Issue.record("no --pin"); return }
        #expect(scanner.value(given) == "--1234")
        guard case .option("name", let inline) = scanner.next() else { Issue.record("no --name"); return }
        #expect(scanner.value(inline) == "x")
        #expect(scanner.next() == .option("socket", value: nil))
        #expect(scanner.value(nil) == nil, "nothing left for --socket")
    }

    @Test func anOptionalValueIsNeverTheNextOption() {
        var scanner = CommandLineScanner(["--virtual-key", "--user", "--virtual-key", "pin=1234"])
        _ = scanner.next()
        #expect(scanner.optionalValue(nil) == nil)
        #expect(scanner.upcoming == "--user", "left to be read")
        #expect(scanner.next() == .option("user", value: nil))
        _ = scanner.next()
        #expect(scanner.optionalValue(nil) == "pin=1234")
        #expect(scanner.next() == nil)
    }
}
