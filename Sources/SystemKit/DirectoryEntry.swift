import Glibc

/// The name of an entry `readdir` returned.
///
/// `d_name` is declared as 256 bytes, but the kernel's record ends soon
/// after the name's terminating zero: copying the whole field (what
/// `withUnsafeBytes(of: entry.pointee.d_name)` does) reads past the end of
/// the buffer `opendir` allocated, as AddressSanitizer reports. So the name
/// is read in place, up to its zero.
public func directoryEntryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
    let offset = MemoryLayout<dirent>.offset(of: \.d_name)!
    return String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
}
