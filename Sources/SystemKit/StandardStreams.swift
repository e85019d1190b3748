import Glibc

/// Writes text to standard error, unbuffered. (Swift 6 forbids touching
/// the C `stderr` global from concurrent code, and `write(2)` needs no lock.)
public func writeToStandardError(_ text: String) {
    // Nothing to be done when standard error itself fails.
    try? writeAll(2, Array(text.utf8))
}

/// Flushes every C stdio output stream, `print`'s included.
public func flushStandardOutput() {
    fflush(nil)
}

/// The process environment as a dictionary.
public func currentEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let text = String(cString: entry)
        if let equals = text.firstIndex(of: "=") {
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        pointer += 1
    }
    return result
}
