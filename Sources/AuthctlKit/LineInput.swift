import SystemKit

/// Reads one line from `fd`, a byte at a time so that nothing after the
/// line is consumed (the next PIN on a `--pin-fd` pipe stays there for the
/// next prompt). nil at the end of input, or on an error, before any byte.
/// The newline (and a carriage return before it) is not part of the line.
/// Callers zero the bytes when they are secret.
func readLine(from fd: Int32, limit: Int = 4096) -> [UInt8]? {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    var sawAnything = false
    while true {
        // A read error ends the line as the end of input does.
        guard let count = try? withUnsafeMutableBytes(of: &byte, { try FileDescriptor.read(fd, into: $0) }), count == 1
        else { break }
        sawAnything = true
        if byte == UInt8(ascii: "\n") { break }
        // A line longer than any answer authctl asks for is cut, not buffered without end.
        if line.count < limit { line.append(byte) }
    }
    guard sawAnything else { return nil }
    if line.last == UInt8(ascii: "\r") { line.removeLast() }
    return line
}

/// Zeroes a secret's bytes once it has been handed on.
func wipe(_ bytes: inout [UInt8]) {
    zeroSecret(&bytes)
}
