internal import CSystem
import Glibc
import Synchronization

/// Unix-domain sockets, as file descriptors.
///
/// Every descriptor is made close-on-exec, so that a helper the daemon starts
/// never inherits a client's connection.
public enum UnixSocket {
    public enum Kind: Sendable {
        /// A byte stream (the daemon's JSON protocol).
        case stream
        /// Whole messages, in order (one CTAPHID report each, for socket keys).
        case seqPacket

        var rawValue: Int32 {
            switch self {
            case .stream: return Int32(SOCK_STREAM.rawValue)
            case .seqPacket: return Int32(SOCK_SEQPACKET.rawValue)
            }
        }
    }

    /// The longest path a `sockaddr_un` holds, without its terminating NUL.
    public static let maxPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Creates a socket listening at `path`. An existing file at `path` is
    /// not touched (the call fails): callers decide whether it is stale.
    ///
    /// The file appears only once the socket listens. Bound in place, it
    /// would exist for a moment in which `connect` is refused, and a client
    /// that waits for the file to appear would fail (seen in the tests).
    /// So the socket is bound under a temporary name beside `path`, and
    /// hard-linked into place after `listen`; `link`, unlike `rename`,
    /// never replaces a file that appeared meanwhile.
    public static func listen(path: String, kind: Kind, backlog: Int32 = 128) throws(SystemError) -> Int32 {
        let temporary = temporaryName(beside: path)
        let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, kind.rawValue | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            if let temporary {
                unlink(temporary)
                defer { unlink(temporary) }
                try bindAndListen(fd, at: temporary, backlog: backlog)
                try retryingOnInterrupt("link(\(path))") { link(temporary, path) }
            } else {
                try bindAndListen(fd, at: path, backlog: backlog)
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    private static func bindAndListen(_ fd: Int32, at path: String, backlog: Int32) throws(SystemError) {
        try withAddress(path) { (address, length) throws(SystemError) in
            try retryingOnInterrupt("bind(\(path))") { bind(fd, address, length) }
        }
        try retryingOnInterrupt("listen(\(path))") { Glibc.listen(fd, backlog) }
    }

    /// A name in the same directory (a hard link cannot cross file
    /// systems), unique to this process and call; nil when it would not
    /// fit in a `sockaddr_un`, and the socket is then bound in place.
    private static func temporaryName(beside path: String) -> String? {
        let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? ""
        let name = "\(directory).authkeyd-\(getpid())-\(temporaryNames.add(1, ordering: .relaxed).newValue).tmp"
        return name.utf8.count <= maxPathLength ? name : nil
    }

    private static let temporaryNames = Atomic<Int>(0)

    /// A datagram socket bound to `path`, to receive on: the service
    /// manager's end of `sd_notify`, as the tests and benchmarks play it.
    public static func boundDatagram(path: String) throws(SystemError) -> Int32 {
        let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            try withAddress(path) { (address, length) throws(SystemError) in
                try retryingOnInterrupt("bind(\(path))") { bind(fd, address, length) }
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// Connects to the socket at `path`.
    public static func connect(path: String, kind: Kind) throws(SystemError) -> Int32 {
        let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, kind.rawValue | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            try withAddress(path) { (address, length) throws(SystemError) in
                try retryingOnInterrupt("connect(\(path))") { Glibc.connect(fd, address, length) }
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// Accepts one connection, close-on-exec; nil when none is waiting on a
    /// non-blocking listener.
    public static func accept(_ listener: Int32, nonBlocking: Bool = false) throws(SystemError) -> Int32? {
        while true {
            // accept4 sets both flags as it makes the descriptor: nothing
            // to undo (or leak) if setting them failed afterwards.
            let flags = Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
            let fd = authkeyd_accept(listener, flags)
            if fd >= 0 { return fd }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN: return nil
            default: throw SystemError("accept")
            }
        }
    }

    /// Whether something is accepting connections at `path` (a live socket, not a stale file).
    public static func isListening(path: String, kind: Kind) -> Bool {
        guard let fd = try? connect(path: path, kind: kind) else { return false }
        Glibc.close(fd)
        return true
    }

    /// The address of `path` as `body` takes it; `abstract`: of the name
    /// `path` in the abstract namespace (`AbstractSocket.swift`).
    @discardableResult
    static func withAddress<R>(
        _ path: String, abstract: Bool = false, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> R
    ) throws(SystemError) -> R {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maxPathLength else {
            throw SystemError(abstract ? "abstract socket @\(path)" : "socket path \(path)", code: ENAMETOOLONG)
        }
        // A path ends at its NUL; an abstract name starts with one, and the
        // address is exactly as long as the name.
        let sunPath = abstract ? [0] + bytes : bytes + [0]
        let length = abstract ? MemoryLayout<sa_family_t>.size + sunPath.count : MemoryLayout<sockaddr_un>.size
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: sunPath) }
        return try withUnsafePointer(to: &address) { (pointer) throws(SystemError) -> R in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (p) throws(SystemError) -> R in try body(p, socklen_t(length)) }
        }
    }
}

/// Who is on the other end of a Unix socket (`SO_PEERCRED`), as the kernel
/// recorded it at connect time.
public struct PeerCredentials: Equatable, Sendable {
    public let pid: pid_t
    public let uid: uid_t
    public let gid: gid_t

    public init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public init(socket fd: Int32) throws(SystemError) {
        // `struct ucred` is hidden behind _GNU_SOURCE; its layout is fixed
        // by the kernel ABI: pid, uid, gid, 32 bits each.
        var credentials: (pid: pid_t, uid: uid_t, gid: gid_t) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        try retryingOnInterrupt("getsockopt(SO_PEERCRED)") {
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length)
        }
        self.init(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }
}

/// The peer's supplementary groups as the kernel recorded them at connect
/// time (`SO_PEERGROUPS`, Linux 4.13): group membership without trusting
/// /etc/group to be what it was when the client logged in.
public func peerGroups(socket fd: Int32) throws(SystemError) -> [gid_t] {
    var groups = [gid_t](repeating: 0, count: 64)
    while true {
        var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
        let result = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length) }
        if result == 0 { return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size)) }
        guard errno == ERANGE, groups.count < 65_536 else { throw SystemError("getsockopt(SO_PEERGROUPS)") }
        groups = [gid_t](repeating: 0, count: max(groups.count * 2, Int(length) / MemoryLayout<gid_t>.size))
    }
}
