import SystemKit

/// Bytes from the kernel's random source, for challenges and user ids
/// nobody gave on the command line: through `getrandom`, not a digest
/// library's generator, which keeps authctl off libcrypto.
func randomBytes(_ count: Int) throws(Stop) -> [UInt8] {
    do {
        return try kernelRandomBytes(count)
    } catch {
        throw Stop("cannot read the kernel's random source: \(error)", .failure)
    }
}
