// authkeyd-virtkey: a virtual FIDO2 security key on a Unix SOCK_SEQPACKET
// socket, for `authkeyd --attach unix:PATH` and any other CTAPHID host.
import Dispatch
import Glibc
import SystemKit
import VirtualKey

let usage = """
    Usage: authkeyd-virtkey --socket PATH [--SETTING VALUE]...

    Serves one virtual CTAP 2.1 security key on a Unix SOCK_SEQPACKET socket:
    one 64-byte CTAPHID report per message, no report-ID byte. Several hosts
    may connect at once. SIGUSR1 touches the key (for presence=manual);
    SIGTERM or SIGINT stops it and removes the socket.

    Settings (the same as authkeyd's --virtual-key=SPEC):
    \(VirtualKeyConfiguration.specSettings.map { "  --\($0.name) \($0.value)\n      \($0.meaning)" }.joined(separator: "\n"))

    Example:
      authkeyd-virtkey --socket /tmp/key.sock --name "Test Key" --pin 123456 --presence after:300ms
    """

/// Exits with EX_USAGE (64) for a wrong command line, 1 for a failure.
func fail(_ message: String, status: Int32 = 64) -> Never {
    writeToStandardError("authkeyd-virtkey: \(message)\n")
    exit(status)
}

var arguments = CommandLine.arguments.dropFirst()
var socketPath: String?
var configuration = VirtualKeyConfiguration()
while let argument = arguments.popFirst() {
    switch argument {
    case "-h", "--help":
        print(usage)
        exit(0)
    case "--socket":
        guard let path = arguments.popFirst() else { fail("--socket needs a path") }
        socketPath = path
    case let flag where flag.hasPrefix("--"):
        var name = String(flag.dropFirst(2))
        var value: String
        if let equals = name.firstIndex(of: "=") {
            value = String(name[name.index(after: equals)...])
            name = String(name[..<equals])
        } else {
            guard let next = arguments.popFirst() else { fail("\(flag) needs a value") }
            value = next
        }
        if name == "socket" {
            socketPath = value
            continue
        }
        do { try configuration.apply(setting: name, value: value) } catch { fail("\(error)") }
    default:
        fail("unexpected argument '\(argument)'\n\n\(usage)")
    }
}
guard let socketPath else { fail("--socket PATH is required\n\n\(usage)") }

let key: VirtualKey
do { key = try VirtualKey(configuration: configuration) } catch { fail("\(error)", status: 1) }
let server = VirtualKeySocketServer(key: key, path: socketPath)
do { try server.start() } catch { fail("cannot serve \(socketPath): \(error)", status: 1) }
print("authkeyd-virtkey: serving \"\(configuration.productName)\" on \(socketPath)")
flushStandardOutput()

var signalSources: [DispatchSourceSignal] = []
for signalNumber in [SIGTERM, SIGINT, SIGUSR1] {
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        if signalNumber == SIGUSR1 {
            key.touch()
        } else {
            server.stop()
            exit(0)
        }
    }
    source.resume()
    signalSources.append(source)
}
dispatchMain()
