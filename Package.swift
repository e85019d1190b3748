// swift-tools-version:6.0
// authkeyd: a FIDO2 security-key broker for Linux.
//
// Swift 6 language mode (complete concurrency checking) for every target.
// No outside Swift packages: the toolchain's own modules, and Debian's C
// libraries through system-library targets.
import Foundation
import PackageDescription

/// The package's directory, for linker flags that name a file of it.
let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path

let package = Package(
    name: "authkeyd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "authkeyd", targets: ["authkeyd"]),
        .executable(name: "authctl", targets: ["authctl"]),
        .executable(name: "authkeyd-virtkey", targets: ["authkeyd-virtkey"]),
        .library(name: "AuthClient", targets: ["AuthClient"]),
        .library(name: "FIDO2", targets: ["FIDO2"]),
        .library(name: "VirtualKey", targets: ["VirtualKey"]),
        // OpenSSH's security-key provider (libauthkeyd-sk.so), loaded by
        // ssh-sk-helper. Installed built with -static-stdlib, so that it
        // needs only Debian's libraries.
        .library(name: "authkeyd-sk", type: .dynamic, targets: ["authkeyd-sk"]),
        // The PAM module (pam_authkeyd.so): pam_u2f's job through the
        // broker. Installed built as the provider is.
        .library(name: "pam_authkeyd", type: .dynamic, targets: ["pam_authkeyd"]),
    ],
    targets: [
        // Debian's C libraries.
        .systemLibrary(
            name: "CFido2", path: "Sources/CFido2", pkgConfig: "libfido2",
            providers: [.apt(["libfido2-dev"])]),
        .systemLibrary(
            name: "CUdev", path: "Sources/CUdev", pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]),
        .systemLibrary(
            name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),

        // OpenSSH's security-key middleware API (version 10), declared by
        // the project from its documentation: the structs the provider fills.
        .systemLibrary(name: "CSSHSecurityKeyAPI", path: "Sources/CSSHSecurityKeyAPI"),

        // Debian's libpam, as a PAM module calls it.
        .systemLibrary(name: "CPAM", path: "Sources/CPAM", pkgConfig: "pam", providers: [.apt(["libpam0g-dev"])]),

        // Linux calls Swift cannot import as they are (variadic prctl).
        .systemLibrary(name: "CSystem", path: "Sources/CSystem"),

        // tpm2-tss: ESAPI, the TCTI loader, marshalling, error strings.
        .systemLibrary(
            name: "CTSS2", path: "Sources/CTSS2", pkgConfig: "tss2-esys tss2-tctildr tss2-mu tss2-rc",
            providers: [.apt(["libtss2-dev"])]),

        // Pure Swift building blocks.
        .target(name: "CBOR"),
        .target(name: "SystemKit", dependencies: ["CSystem"]),
        .target(name: "Crypto", dependencies: ["CCrypto", "SystemKit"]),
        // The TPM: ES256 keys made and used inside it (the platform authenticator's key store).
        .target(name: "TPM2", dependencies: ["CTSS2", "SystemKit"]),

        // The wire protocol: JSON, NDJSON framing, JSON-RPC 2.0, wire types. No I/O.
        .target(name: "AuthProtocol"),

        // The 64-byte report pipe that libfido2's custom I/O drives and the
        // virtual key serves: apart, so the virtual key needs no libfido2.
        .target(name: "HIDReports"),

        // A software CTAP 2.1 authenticator and its front ends.
        .target(name: "VirtualKey", dependencies: ["CBOR", "Crypto", "HIDReports", "SystemKit"]),

        // The Swift face of libfido2 (and a virtual key opened through it).
        .target(name: "FIDO2", dependencies: ["CFido2", "CBOR", "Crypto", "HIDReports", "SystemKit"]),

        // A virtual key opened through libfido2, for the tests, the fuzzer and the benchmarks.
        .target(name: "VirtualKeyDevice", dependencies: ["FIDO2", "VirtualKey"]),

        // USB keys present and their hotplug events; the only module that touches libudev.
        .target(name: "Hotplug", dependencies: ["CUdev", "FIDO2", "SystemKit"]),

        // The broker: its services, clients, routing, methods, operations, keys, policy.
        .target(
            name: "AuthDaemon",
            dependencies: ["AuthProtocol", "FIDO2", "VirtualKey", "SystemKit", "Hotplug", "CBOR", "Crypto"]),

        // The client library: connection, correlation, notifications, prompts.
        .target(name: "AuthClient", dependencies: ["AuthProtocol", "CBOR", "SystemKit"]),

        // OpenSSH's provider: what ssh asks, as the broker's requests, and
        // the answers as OpenSSH wants them. No Foundation (it runs inside
        // ssh-sk-helper, linked statically).
        .target(name: "SSHSecurityKey", dependencies: ["AuthClient", "AuthProtocol", "CBOR", "Crypto", "SystemKit"]),
        // The C entry points (sk_api_version, sk_enroll, sk_sign,
        // sk_load_resident_keys) over SSHSecurityKey.
        // Linked `-z nodelete`: ssh-sk-helper dlcloses the provider after
        // each call, while threads of the Swift runtime and the client's
        // reader may still run its code; unmapping it under them crashes
        // the helper. Exporting only the four functions ssh-sk-helper looks
        // up (sk-api.map), in every build.
        .target(
            name: "authkeyd-sk", dependencies: ["CSSHSecurityKeyAPI", "SSHSecurityKey", "SystemKit"], path: "Sources/authkeyd-sk",
            linkerSettings: [.unsafeFlags([
                "-Xlinker", "-z", "-Xlinker", "nodelete",
                "-Xlinker", "--version-script=\(packageDirectory)/Sources/CSSHSecurityKeyAPI/sk-api.map",
            ])]),

        // The PAM module's work, apart from libpam so that its tests need
        // no PAM stack: pam_u2f's authfiles and options, the request, the
        // check of the answer. No Foundation (it runs inside sudo).
        .target(name: "PAMAuthkeyd", dependencies: ["AuthClient", "AuthProtocol", "Crypto", "PAMAuthFile", "SystemKit"]),
        // pam_u2f's authfile: read by the module, written by `authctl pam
        // register` (which links no libcrypto, so this module does not either).
        .target(name: "PAMAuthFile", dependencies: ["AuthProtocol", "CBOR"]),
        // The PAM entry points (pam_sm_authenticate, pam_sm_setcred), the
        // conversation and the authfile read as the user. Linked `-z
        // nodelete`, as the provider: pam_end dlcloses modules while the
        // Swift runtime's threads may still run; and exporting only the two
        // functions libpam looks up (pam-module.map), in every build.
        .target(
            name: "pam_authkeyd", dependencies: ["CPAM", "PAMAuthFile", "PAMAuthkeyd", "SystemKit"], path: "Sources/pam_authkeyd",
            linkerSettings: [.unsafeFlags([
                "-Xlinker", "-z", "-Xlinker", "nodelete",
                "-Xlinker", "--version-script=\(packageDirectory)/Sources/CPAM/pam-module.map",
            ])]),

        .executableTarget(name: "authkeyd", dependencies: ["AuthDaemon", "SystemKit"]),
        // authctl's commands, apart from its entry point so that tests can
        // run them in process: arguments in; output and exit status out.
        .target(name: "AuthctlKit", dependencies: ["AuthClient", "AuthProtocol", "CBOR", "PAMAuthFile", "SystemKit"]),
        .executableTarget(name: "authctl", dependencies: ["AuthctlKit"]),
        .executableTarget(name: "authkeyd-virtkey", dependencies: ["SystemKit", "VirtualKey"]),
        .executableTarget(
            name: "authkeyd-bench", dependencies: ["FIDO2", "VirtualKey", "VirtualKeyDevice", "AuthClient", "AuthProtocol", "SystemKit"],
            path: "Benchmarks"),

        // libFuzzer targets (scripts/fuzz): the library the fuzzer and the
        // regression tests share, and the executable that is the fuzzer
        // when built with -DFUZZING and replays inputs otherwise.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "AuthClient", "AuthctlKit", "AuthProtocol", "CBOR", "Crypto", "FIDO2", "HIDReports", "PAMAuthFile", "SystemKit", "VirtualKey",
                "VirtualKeyDevice",
            ]),
        .executableTarget(name: "authkeyd-fuzz", dependencies: ["FuzzTargets"], path: "Fuzz/authkeyd-fuzz"),

        // Helpers shared by the test targets.
        .target(
            name: "TestSupport", dependencies: ["FIDO2", "HIDReports", "VirtualKey", "SystemKit", "CBOR", "Crypto", "AuthClient", "AuthProtocol"],
            path: "Tests/TestSupport"),

        .testTarget(name: "CBORTests", dependencies: ["CBOR", "TestSupport"]),
        .testTarget(name: "AuthProtocolTests", dependencies: ["AuthProtocol"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "SystemKit", "TestSupport"]),
        .testTarget(name: "SystemKitTests", dependencies: ["SystemKit"]),
        .testTarget(name: "TPM2Tests", dependencies: ["TPM2", "Crypto", "TestSupport"]),
        .testTarget(name: "VirtualKeyTests", dependencies: ["VirtualKey", "FIDO2", "CBOR", "Crypto", "TestSupport", "FuzzTargets", "VirtualKeyDevice"]),
        .testTarget(name: "FIDO2Tests", dependencies: ["FIDO2", "VirtualKey", "CBOR", "Crypto", "SystemKit", "TestSupport", "VirtualKeyDevice"]),
        // A broker in the test's process (InProcessBroker), for the test
        // targets that need one: apart from TestSupport, so that the other
        // targets do not link the daemon.
        .target(
            name: "BrokerTestSupport", dependencies: ["AuthClient", "AuthDaemon", "AuthProtocol", "SystemKit", "TestSupport"],
            path: "Tests/BrokerTestSupport"),
        .testTarget(
            name: "AuthDaemonTests",
            dependencies: ["AuthDaemon", "AuthProtocol", "AuthClient", "BrokerTestSupport", "CBOR", "Crypto", "FIDO2", "Hotplug", "SystemKit", "TestSupport", "VirtualKey", "VirtualKeyDevice"]),
        // authctl's commands run in process (AuthctlKit) against a broker in
        // process: arguments in; standard output, standard error and the
        // exit status out.
        .testTarget(
            name: "AuthctlTests",
            dependencies: ["AuthctlKit", "AuthClient", "AuthProtocol", "BrokerTestSupport", "PAMAuthFile", "SystemKit", "TestSupport"]),
        // Start the real binaries (authkeyd, authctl, authkeyd-virtkey) and talk to them as clients do.
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["CSSHSecurityKeyAPI", "AuthClient", "AuthProtocol", "Crypto", "FIDO2", "VirtualKey", "SystemKit", "TestSupport", "VirtualKeyDevice"]),
        // Replays Fuzz/corpus and Fuzz/crashes (found from #filePath) through the fuzz targets.
        // The provider's conversions and its C entry points, called directly.
        .testTarget(
            name: "SSHSecurityKeyTests",
            dependencies: ["SSHSecurityKey", "CBOR", "Crypto", "TestSupport"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets", "TestSupport"]),
        // The PAM module's authfile, options and checks, without a PAM stack.
        .testTarget(name: "PAMAuthkeydTests", dependencies: ["PAMAuthkeyd", "PAMAuthFile", "AuthProtocol", "Crypto"]),
    ],
    swiftLanguageModes: [.v6]
)
