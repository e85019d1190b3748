import Glibc

/// Whether ThreadSanitizer or AddressSanitizer is in this process (their
/// runtimes define these symbols): some limits, on memory above all, do not
/// hold under them.
public let runningUnderSanitizer = ["__tsan_init", "__asan_init"].contains { (symbol: String) in
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol) != nil
}
