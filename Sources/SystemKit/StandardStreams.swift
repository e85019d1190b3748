import Glibc

/// Writes text to standard error, unbuffered. (Swift 6 forbids touching
/// the C `stderr` global from concurrent code, and `write(2)` needs no lock.)
public func writeToStandardError(_ text: String) {
    // Standard error is where a failure would be reported: there is no
    // one left to tell that it failed.
    try? FileDescriptor.writeAll(2, Array(text.utf8))
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

/// One environment variable; nil when it is not set.
public func environmentVariable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
