import Glibc

/// The name of an entry `readdir` returned.
///
/// `d_name` is declared as 256 bytes, but the kernel's record ends soon
/// after the name's terminating zero: copying the whole field (what
/// `withUnsafeBytes(of: entry.pointee.d_name)` does) reads past the end of
/// the buffer `opendir` allocated, as AddressSanitizer reports. So the name
/// is read in place, up to its zero.
func directoryEntryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
    let offset = MemoryLayout<dirent>.offset(of: \.d_name)!
    return String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
}

/// The names in the directory at `path`, without "." and "..", in the
/// order `readdir` gives them; nil when the directory cannot be opened.
public func directoryNames(_ path: String) -> [String]? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = directoryEntryName(entry)
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}
