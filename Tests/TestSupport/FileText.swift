import SystemKit

/// A file's text; empty when the file is missing or unreadable.
///
/// Not `String(contentsOfFile:)`: Foundation (swift-corelibs, Swift 6.3.1)
/// leaks a 4 KiB buffer for every empty file it reads, LeakSanitizer
/// reports each, and the tests read many empty outputs and logs.
public func fileText(_ path: String) -> String {
    AtomicFile.text(path) ?? ""
}
