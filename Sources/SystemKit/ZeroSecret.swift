import Glibc

/// Overwrites a secret's bytes with zeros (`explicit_bzero`): unlike a loop
/// or `memset` on memory about to be freed, the compiler may not leave it out.
public func zeroSecret(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let start = buffer.baseAddress else { return }
    explicit_bzero(start, buffer.count)
}

/// Zeroes every byte of `bytes`, which keep their count.
public func zeroSecret(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { zeroSecret($0) }
}
