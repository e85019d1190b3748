// authkeyd-virtkey: a virtual FIDO2 security key on a Unix SOCK_SEQPACKET
// socket, for `authkeyd --attach unix:PATH` and any other CTAPHID host, or
// as a kernel HID device (UHID), for every program that uses hidraw.
import Dispatch
import Glibc
import SystemKit
import VirtualKey

let usage = """
    Usage: authkeyd-virtkey --socket PATH [--uhid] [--SETTING VALUE]...
           authkeyd-virtkey --uhid [--SETTING VALUE]...

    Serves one virtual CTAP 2.1 security key (or, with --ctap u2f, a
    U2F-only one).

      --socket PATH   on a Unix SOCK_SEQPACKET socket: one 64-byte CTAPHID
                      report per message, no report-ID byte. Several hosts
                      may connect at once.
      --uhid          as a kernel HID device through /dev/uhid (root, and
                      the uhid module: modprobe uhid), USB id \(UHIDDeviceIdentity.virtualKey(productName: "").usbID):
                      the key appears as /dev/hidrawN to libfido2
                      (fido2-token -L), browsers and authkeyd.

    SIGUSR1 touches the key (for presence=manual); SIGTERM or SIGINT stops
    it, removes the socket and unplugs the HID device.

    Settings (the same as authkeyd's --virtual-key=SPEC):
    \(VirtualKeyConfiguration.specSettings.map { "  --\($0.name) \($0.value)\n      \($0.meaning)" }.joined(separator: "\n"))

    Examples:
      authkeyd-virtkey --socket /tmp/key.sock --name "Test Key" --pin 123456 --presence after:300ms
      sudo authkeyd-virtkey --uhid --presence after:300ms
    """

/// Exits with EX_USAGE (64) for a wrong command line, 1 for a failure.
func fail(_ message: String, status: Int32 = 64) -> Never {
    writeToStandardError("authkeyd-virtkey: \(message)\n")
    exit(status)
}

var words = CommandLineScanner(Array(CommandLine.arguments.dropFirst()))
var socketPath: String?
var servesUHID = false
var configuration = VirtualKeyConfiguration()
while let word = words.next() {
    switch word {
    case .other("-h"), .option("help", value: nil):
        print(usage)
        exit(0)
    case .option("socket", value: nil):
        guard let path = words.value(nil) else { fail("--socket needs a path") }
        socketPath = path
    case .option("uhid", value: nil):
        servesUHID = true
    case .option(let name, let given):
        guard let value = words.value(given) else { fail("--\(name) needs a value") }
        if name == "socket" {
            socketPath = value
            continue
        }
        do { try configuration.apply(setting: name, value: value) } catch { fail("\(error)") }
    case .other(let argument):
        fail("unexpected argument '\(argument)'\n\n\(usage)")
    }
}
guard socketPath != nil || servesUHID else { fail("--socket PATH or --uhid is required\n\n\(usage)") }

let key: VirtualKey
do { key = try VirtualKey(configuration: configuration) } catch { fail("\(error)", status: 1) }
let server = socketPath.map { VirtualKeySocketServer(key: key, path: $0) }
if let server {
    do { try server.start() } catch { fail("cannot serve \(server.path): \(error)", status: 1) }
    print("authkeyd-virtkey: serving \"\(configuration.productName)\" on \(server.path)")
}
let hidDevice = servesUHID ? UHIDFrontEnd(key: key) : nil
if let hidDevice {
    do { try hidDevice.start() } catch {
        fail("cannot create a HID device: \(error) (is the uhid module loaded, and are you root?)", status: 1)
    }
    print("authkeyd-virtkey: serving \"\(configuration.productName)\" as the HID device \"\(hidDevice.identity.name)\" (USB id \(hidDevice.identity.usbID))")
}
flushStandardOutput()

var signalSources: [DispatchSourceSignal] = []
for signalNumber in [SIGTERM, SIGINT, SIGUSR1] {
    setSignalHandler(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        if signalNumber == SIGUSR1 {
            key.touch()
        } else {
            server?.stop()
            hidDevice?.stop()
            exit(0)
        }
    }
    source.resume()
    signalSources.append(source)
}
dispatchMain()
