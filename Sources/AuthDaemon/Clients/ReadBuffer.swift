/// The buffer every client connection of one daemon reads into.
///
/// They all read on the daemon's queue, one at a time, and the framer copies
/// what it keeps, so one buffer serves them all. (A fresh, zeroed 64 KiB
/// array per read was most of what a small request cost.)
final class ReadBuffer: @unchecked Sendable {
    let bytes: UnsafeMutableRawBufferPointer

    init(size: Int = 64 * 1024) {
        bytes = .allocate(byteCount: size, alignment: 1)
    }

    deinit {
        bytes.deallocate()
    }
}
