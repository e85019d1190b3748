import AuthDaemon
import Glibc
import Testing

@Suite struct ConfigurationTests {
    func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> DaemonConfiguration {
        guard case .run(let configuration) = try DaemonConfiguration.parse(arguments: arguments, environment: environment) else {
            Issue.record("expected a configuration to run")
            return DaemonConfiguration()
        }
        return configuration
    }

    @Test func flagsAndTheirDefaults() throws {
        let configuration = try parse([
            "--socket", "/tmp/a.sock", "--virtual-key", "--virtual-key=name=B,pin=1234",
            "--attach", "unix:/tmp/k.sock", "--log-level", "debug", "--max-clients=9", "--request-timeout", "90s",
        ])
        #expect(configuration.socketPath == "/tmp/a.sock")
        #expect(configuration.virtualKeys == ["", "name=B,pin=1234"])
        #expect(configuration.attachPaths == ["/tmp/k.sock"])
        #expect(configuration.logLevel == .debug)
        #expect(configuration.maxClients == 9)
        #expect(configuration.requestTimeout == .seconds(90))
        #expect(configuration.allowUsers == ["root", "@authkeyd"])
    }

    /// How long a key stays open after its last use: half a second unless
    /// told, 0 closes it at once, a minute at most.
    @Test func keyLinger() throws {
        #expect(try parse([]).keyLinger == .milliseconds(500))
        #expect(try parse(["--key-linger", "0"]).keyLinger == .zero)
        #expect(try parse(["--key-linger=2s"]).keyLinger == .seconds(2))
        for wrong in ["61s", "-1s", "soon"] {
            #expect(throws: ConfigurationError.self, "\(wrong)") { try parse(["--key-linger", wrong]) }
        }
    }

    @Test func helpAndVersion() throws {
        #expect(try DaemonConfiguration.parse(arguments: ["--help"], environment: [:]) == .help)
        #expect(try DaemonConfiguration.parse(arguments: ["--version"], environment: [:]) == .version)
    }

    @Test func mistakesAreExplained() {
        func message(_ arguments: [String]) -> String? {
            do {
                _ = try DaemonConfiguration.parse(arguments: arguments, environment: [:])
                return nil
            } catch {
                return error.message
            }
        }
        #expect(message(["--attach", "/tmp/x"])?.contains("unix:PATH") == true)
        #expect(message(["--virtual-key", "presence=maybe"])?.contains("presence") == true)
        #expect(message(["--max-clients", "0"])?.contains("from 1") == true)
        #expect(message(["--no-such-setting", "1"])?.contains("unknown setting") == true)
        #expect(message(["--config", "/nonexistent/authkeyd.conf"])?.contains("does not exist") == true)
        #expect(message(["stray"])?.contains("unexpected argument") == true)
        // A PIN in a rejected spec is not repeated back.
        #expect(message(["--virtual-key", "pin=1234,presence=maybe"])?.contains("1234") == false)
    }

    @Test func configFileLines() throws {
        var configuration = DaemonConfiguration()
        try configuration.load(configText: """
            # comment
              socket = /run/x.sock
            virtual-key = name=Work Key , presence = after:200ms
            allow-users = root, @wheel ,1000
            socket-mode = 0660

            """, source: "test.conf")
        #expect(configuration.socketPath == "/run/x.sock")
        #expect(configuration.virtualKeys == ["name=Work Key , presence = after:200ms"])
        #expect(configuration.allowUsers == ["root", "@wheel", "1000"])
        #expect(configuration.socketMode == 0o660)
        var broken = DaemonConfiguration()
        #expect(throws: ConfigurationError.self) { try broken.load(configText: "socket /run/x.sock\n", source: "test.conf") }
    }

    @Test func userInstanceDefaults() throws {
        let configuration = try parse(["--user"], environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/u"])
        #expect(configuration.userInstance)
        #expect(configuration.resolvedSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/authkeyd.sock")
        #expect(configuration.resolvedStateDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.local/state/authkeyd")
        #expect(configuration.allowUsers == [String(getuid())])
        #expect(DaemonConfiguration().resolvedStateDirectory(environment: ["STATE_DIRECTORY": "/var/lib/authkeyd"]) == "/var/lib/authkeyd")
    }
}
