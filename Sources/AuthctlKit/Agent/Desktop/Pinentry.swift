import AuthProtocol
import SystemKit

/// One conversation with a `pinentry` program over the Assuan protocol, as
/// gpg-agent holds it: the PIN dialog and the Proceed/Cancel confirmation
/// are the same dialogs the user already trusts with their GnuPG
/// passphrase, drawn by whichever pinentry Debian's `pinentry`
/// alternative names (GTK, GNOME, Qt, curses).
///
/// Each call blocks until the program answers: run it on a thread of its
/// own. `abandon()` from any other thread ends the conversation at once
/// (the dialog closes, the blocked call returns `.cancelled`).
final class Pinentry: Sendable {
    enum Failure: Error, Equatable {
        /// The user pressed Cancel or closed the dialog, or it was abandoned.
        case cancelled
        /// The program could not be run, or did not speak Assuan.
        case unavailable(String)
    }

    /// gpg-error's codes with pinentry as their source (5 << 24): the user
    /// cancelled (GPG_ERR_CANCELED, 99) or did not confirm
    /// (GPG_ERR_NOT_CONFIRMED, 114).
    static let cancelledCode = 83_886_179
    static let notConfirmedCode = 83_886_194

    private let process: ChildProcess
    private let reader: LineReader

    /// Starts `program` and reads its greeting.
    init(program: String, environment: [String: String] = [:]) throws(Failure) {
        do {
            process = try ChildProcess(program, [], environment: environment, standardInput: .pipe, standardOutput: .pipe, standardError: .null)
        } catch {
            throw .unavailable("cannot run \(program): \(error)")
        }
        reader = LineReader(fd: process.output!)
        guard case .ok = try reply() else { throw .unavailable("\(program) did not greet as Assuan servers do") }
    }

    /// Sets one of the dialog's texts (`SETTITLE`, `SETDESC`, `SETPROMPT`,
    /// `SETERROR`, `SETOK`, `SETCANCEL`, `SETREPEAT`, …).
    func set(_ command: String, _ text: String) throws(Failure) {
        // An error is no failure: an older pinentry without the command
        // still shows the dialog, without that text.
        _ = try send("\(command) \(Self.escaped(text))")
    }

    /// `GETPIN`: the PIN typed, or `.cancelled`. The bytes read are zeroed;
    /// the returned String is the one copy the caller hands on.
    func getPIN() throws(Failure) -> String {
        var pin: [UInt8] = []
        defer { zeroSecret(&pin) }
        switch try exchange("GETPIN", collecting: &pin) {
        case .ok:
            return String(decoding: pin, as: UTF8.self)
        case .error(let code):
            throw code == Self.cancelledCode ? .cancelled : .unavailable("pinentry refused GETPIN (error \(code))")
        }
    }

    /// `CONFIRM`: true for OK, false for Cancel (or the dialog closed).
    func confirm() throws(Failure) -> Bool {
        switch try send("CONFIRM") {
        case .ok: return true
        case .error(let code) where code == Self.cancelledCode || code == Self.notConfirmedCode: return false
        case .error(let code): throw .unavailable("pinentry refused CONFIRM (error \(code))")
        }
    }

    /// Says goodbye and waits for the program to end.
    func close() {
        _ = try? send("BYE")
        process.terminate()
        process.wait()
    }

    /// Ends the conversation from another thread: the dialog goes away and
    /// a call blocked on it fails with `.cancelled`.
    func abandon() {
        process.terminate()
    }

    // MARK: - The protocol

    private enum Reply: Equatable {
        case ok
        case error(Int)
    }

    private func send(_ line: String) throws(Failure) -> Reply {
        var ignored: [UInt8] = []
        return try exchange(line, collecting: &ignored)
    }

    /// Sends one command and reads to its `OK` or `ERR`, appending the
    /// decoded `D` lines to `data`.
    private func exchange(_ line: String, collecting data: inout [UInt8]) throws(Failure) -> Reply {
        try write(line)
        return try reply(collecting: &data)
    }

    /// One line to the program; a program gone is a cancelled question.
    private func write(_ line: String) throws(Failure) {
        do {
            try FileDescriptor.writeAll(process.input!, Array((line + "\n").utf8))
        } catch {
            throw .cancelled
        }
    }

    private func reply() throws(Failure) -> Reply {
        var ignored: [UInt8] = []
        return try reply(collecting: &ignored)
    }

    /// Reads to the `OK` or `ERR` that ends a reply. An `INQUIRE` is
    /// answered `CAN`: none of our commands asks one.
    private func reply(collecting data: inout [UInt8]) throws(Failure) -> Reply {
        while true {
            // The end of its output: the program died or was abandoned.
            guard var line = reader.nextLine() else { throw .cancelled }
            defer { zeroSecret(&line) }
            if line == Array("OK".utf8) || line.starts(with: Array("OK ".utf8)) { return .ok }
            if line.starts(with: Array("ERR ".utf8)) {
                let code = line.dropFirst(4).prefix { $0 != 0x20 }
                return .error(Int(String(decoding: code, as: UTF8.self)) ?? -1)
            }
            if line.starts(with: Array("D ".utf8)) {
                Self.unescape(line.dropFirst(2), into: &data)
            } else if line.starts(with: Array("INQUIRE".utf8)) {
                try write("CAN")
            }
            // "S" status lines and "#" comments say nothing we act on.
        }
    }

    /// An Assuan argument: `%`, CR, LF and other control characters as
    /// `%XX`, so that a line break in a description stays one.
    static func escaped(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if byte == UInt8(ascii: "%") || byte < 0x20 {
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A `D` line's data with its `%XX` escapes decoded.
    static func unescape(_ data: ArraySlice<UInt8>, into output: inout [UInt8]) {
        var index = data.startIndex
        while index < data.endIndex {
            if data[index] == UInt8(ascii: "%"), index + 2 < data.endIndex, let high = Hex.value(of: data[index + 1]),
                let low = Hex.value(of: data[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(data[index])
                index += 1
            }
        }
    }
}

/// Lines from a blocking descriptor, without their line feed; the bytes
/// buffered are zeroed as they are handed out (a `D` line holds a PIN).
final class LineReader: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private let lock = Lock()

    init(fd: Int32) { self.fd = fd }

    deinit { zeroSecret(&buffer) }

    /// The next line; nil at the end of input (or a read error), or past
    /// 64 KiB without a line feed (Assuan's lines are at most 1,000 bytes).
    func nextLine() -> [UInt8]? {
        lock.withLock {
            while true {
                if let end = buffer.firstIndex(of: 0x0A) {
                    let line = Array(buffer[..<end])
                    for index in 0...end { buffer[index] = 0 }
                    buffer.removeFirst(end + 1)
                    return line
                }
                guard buffer.count < 65_536 else { return nil }
                var chunk = [UInt8](repeating: 0, count: 1024)
                defer { zeroSecret(&chunk) }
                let count = try? chunk.withUnsafeMutableBytes { bytes throws(SystemError) in try FileDescriptor.read(fd, into: bytes) }
                guard let count = count ?? nil, count > 0 else { return nil }
                buffer += chunk[..<count]
            }
        }
    }
}
