import Glibc

/// epoll(7), which Swift's Glibc module does not import (it leaves out
/// <sys/epoll.h>): the three calls are looked up with dlsym and called
/// through their C signatures; `struct epoll_event` is handled as bytes
/// (packed on x86-64: 4 bytes of events, then 8 of data).
///
/// The bench waits on a thousand connections at once; poll(2) would cost
/// the bench O(connections) per wake-up and take CPU from the daemon.
final class Epoll {
    private typealias Create = @convention(c) (Int32) -> Int32
    private typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32

    #if arch(x86_64)
    private static let eventSize = 12
    private static let dataOffset = 4
    #else
    private static let eventSize = 16
    private static let dataOffset = 8
    #endif
    private static let eventIn: UInt32 = 0x001
    private static let add: Int32 = 1
    private static let delete: Int32 = 2
    private static let closeOnExec: Int32 = 0o2000000

    private let fd: Int32
    private let control: Control
    private let wait: Wait
    private let events: UnsafeMutableRawPointer
    private let capacity = 512

    init() throws {
        guard let create = Self.symbol("epoll_create1", as: Create.self),
            let control = Self.symbol("epoll_ctl", as: Control.self),
            let wait = Self.symbol("epoll_wait", as: Wait.self)
        else { throw BenchError("epoll is not available") }
        self.control = control
        self.wait = wait
        fd = create(Self.closeOnExec)
        guard fd >= 0 else { throw BenchError("epoll_create1: errno \(errno)") }
        events = UnsafeMutableRawPointer.allocate(byteCount: capacity * Self.eventSize, alignment: 8)
    }

    deinit {
        close(fd)
        events.deallocate()
    }

    /// Watches `descriptor` for input; `token` comes back with its events.
    func watch(_ descriptor: Int32, token: UInt64) throws {
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        event.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: Self.eventIn, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: token, toByteOffset: Self.dataOffset, as: UInt64.self)
        }
        let result = event.withUnsafeMutableBytes { control(fd, Self.add, descriptor, $0.baseAddress) }
        guard result == 0 else { throw BenchError("epoll_ctl: errno \(errno)") }
    }

    func forget(_ descriptor: Int32) {
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        _ = event.withUnsafeMutableBytes { control(fd, Self.delete, descriptor, $0.baseAddress) }
    }

    /// Waits up to `timeoutMilliseconds`; the tokens of the ready descriptors.
    func wait(timeoutMilliseconds: Int32) -> [UInt64] {
        let count = wait(fd, events, Int32(capacity), timeoutMilliseconds)
        guard count > 0 else { return [] }
        return (0..<Int(count)).map { events.loadUnaligned(fromByteOffset: $0 * Self.eventSize + Self.dataOffset, as: UInt64.self) }
    }

    private static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }
}
