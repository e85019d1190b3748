import CSSHSecurityKeyAPI
import Crypto
import Foundation
import TestSupport
import Testing

/// The provider's C entry points called directly, as ssh-sk-helper calls
/// them: the built libauthkeyd-sk.so loaded with dlopen, a real daemon with
/// a virtual key behind it, and each signature checked here with the
/// public key enroll returned, over the message OpenSSH verifies
/// (SHA-256(application) ‖ flags ‖ counter ‖ SHA-256(data)). Beside the
/// tests with OpenSSH itself (OpenSSH*Tests), never instead of them.
@Suite(.serialized) struct ProviderEntryPointTests {
    @Test func theAPIVersionIsOpenSSHs10() throws {
        let provider = try LoadedProvider()
        #expect(provider.apiVersion() & UInt32(SSH_SK_VERSION_MAJOR_MASK) == 0x000a_0000)
    }

    @Test(arguments: [(UInt32(SSH_SK_ED25519), "ssh:"), (UInt32(SSH_SK_ECDSA), "ssh:entry-points")])
    func anEnrolledKeySignsWhatOpenSSHVerifies(algorithm: UInt32, application: String) async throws {
        let daemon = try DaemonProcess(["--virtual-key"])
        _ = try await daemon.waitForKeys(1)
        let provider = try LoadedProvider()
        try withEnvironment("AUTHKEYD_SOCKET", daemon.socketPath) {
            let challenge = [UInt8](repeating: 7, count: 32)
            var enrolled: UnsafeMutablePointer<sk_enroll_response>?
            let flags = UInt8(SSH_SK_USER_PRESENCE_REQD)
            let enrollStatus = provider.enroll(algorithm, challenge, challenge.count, application, flags, nil, nil, &enrolled)
            try #require(enrollStatus == 0, "sk_enroll returned \(enrollStatus)")
            let response = try #require(enrolled)
            defer { provider.free(response) }
            #expect(response.pointee.flags == flags, "the flags as requested")
            let publicKey = Array(UnsafeBufferPointer(start: response.pointee.public_key, count: response.pointee.public_key_len))
            let keyHandle = Array(UnsafeBufferPointer(start: response.pointee.key_handle, count: response.pointee.key_handle_len))
            #expect(!keyHandle.isEmpty)
            #expect(response.pointee.authdata_len >= 37 + 16 + 2 + keyHandle.count)

            let data = Array("data OpenSSH signs".utf8)
            var signed: UnsafeMutablePointer<sk_sign_response>?
            let signStatus = provider.sign(
                algorithm, data, data.count, application, keyHandle, keyHandle.count, flags, nil, nil, &signed)
            try #require(signStatus == 0, "sk_sign returned \(signStatus)")
            let signature = try #require(signed)
            defer { provider.free(signature) }
            #expect(signature.pointee.flags & 0x01 != 0, "the key saw the user (UP)")
            var counter = signature.pointee.counter.bigEndian
            let message = SHA256.hash(Array(application.utf8)) + [signature.pointee.flags]
                + withUnsafeBytes(of: &counter) { Array($0) } + SHA256.hash(data)
            let r = Array(UnsafeBufferPointer(start: signature.pointee.sig_r, count: signature.pointee.sig_r_len))
            if algorithm == UInt32(SSH_SK_ED25519) {
                #expect(publicKey.count == 32 && r.count == 64 && signature.pointee.sig_s == nil)
                #expect(try Ed25519.PublicKey(rawRepresentation: publicKey).isValidSignature(r, for: message))
                #expect(try !Ed25519.PublicKey(rawRepresentation: publicKey).isValidSignature(r, for: message + [0]))
            } else {
                let s = Array(UnsafeBufferPointer(start: signature.pointee.sig_s, count: signature.pointee.sig_s_len))
                #expect(publicKey.count == 65 && publicKey.first == 0x04)
                let key = try P256.PublicKey(x962Representation: publicKey)
                #expect(key.isValidSignature(derECDSASignature(r: r, s: s), for: message))
                #expect(!key.isValidSignature(derECDSASignature(r: r, s: s), for: message + [0]))
            }
        }
    }

    @Test func withoutADaemonEveryCallSaysDeviceNotFoundAtOnce() throws {
        let provider = try LoadedProvider()
        let directory = TemporaryDirectory(prefix: "authkeyd-sk")
        try withEnvironment("AUTHKEYD_SOCKET", directory.file("nobody-listens.sock")) {
            let started = ContinuousClock.now
            var enrolled: UnsafeMutablePointer<sk_enroll_response>?
            let challenge = [UInt8](repeating: 0, count: 32)
            #expect(provider.enroll(UInt32(SSH_SK_ED25519), challenge, 32, "ssh:", 1, nil, nil, &enrolled) == SSH_SK_ERR_DEVICE_NOT_FOUND)
            #expect(enrolled == nil)
            var count = 0
            var keys: UnsafeMutablePointer<UnsafeMutablePointer<sk_resident_key>?>?
            #expect(provider.loadResidentKeys("1234", nil, &keys, &count) == SSH_SK_ERR_DEVICE_NOT_FOUND)
            #expect(keys == nil && count == 0)
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }

    /// What OpenSSH could pass wrongly is an error code, never a crash.
    @Test func badArgumentsAreErrorsNotCrashes() throws {
        let provider = try LoadedProvider()
        let challenge = [UInt8](repeating: 0, count: 32)
        var enrolled: UnsafeMutablePointer<sk_enroll_response>?
        #expect(provider.enroll(UInt32(SSH_SK_ED25519), challenge, 32, "ssh:", 1, nil, nil, nil) == SSH_SK_ERR_GENERAL)
        #expect(provider.enroll(9, challenge, 32, "ssh:", 1, nil, nil, &enrolled) == SSH_SK_ERR_UNSUPPORTED)
        #expect(provider.enroll(UInt32(SSH_SK_ED25519), nil, 32, "ssh:", 1, nil, nil, &enrolled) == SSH_SK_ERR_GENERAL)
        #expect(provider.enroll(UInt32(SSH_SK_ED25519), challenge, 32, nil, 1, nil, nil, &enrolled) == SSH_SK_ERR_GENERAL)
        // An option the provider does not know, marked required.
        let status = "colour".withCString { name in
            "red".withCString { value in
                var option = sk_option(name: UnsafeMutablePointer(mutating: name), value: UnsafeMutablePointer(mutating: value), required: 1)
                return withUnsafeMutablePointer(to: &option) { pointer in
                    var options: [UnsafeMutablePointer<sk_option>?] = [pointer, nil]
                    return provider.enroll(UInt32(SSH_SK_ED25519), challenge, 32, "ssh:", 1, nil, &options, &enrolled)
                }
            }
        }
        #expect(status == SSH_SK_ERR_UNSUPPORTED)
        #expect(enrolled == nil)
    }
}

/// libauthkeyd-sk.so as ssh-sk-helper loads it: dlopen and dlsym.
private struct LoadedProvider {
    typealias APIVersion = @convention(c) () -> UInt32
    typealias Enroll = @convention(c) (
        UInt32, UnsafePointer<UInt8>?, Int, UnsafePointer<CChar>?, UInt8, UnsafePointer<CChar>?,
        UnsafeMutablePointer<UnsafeMutablePointer<sk_option>?>?, UnsafeMutablePointer<UnsafeMutablePointer<sk_enroll_response>?>?
    ) -> Int32
    typealias Sign = @convention(c) (
        UInt32, UnsafePointer<UInt8>?, Int, UnsafePointer<CChar>?, UnsafePointer<UInt8>?, Int, UInt8, UnsafePointer<CChar>?,
        UnsafeMutablePointer<UnsafeMutablePointer<sk_option>?>?, UnsafeMutablePointer<UnsafeMutablePointer<sk_sign_response>?>?
    ) -> Int32
    typealias LoadResidentKeys = @convention(c) (
        UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<sk_option>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<sk_resident_key>?>?>?, UnsafeMutablePointer<Int>?
    ) -> Int32

    let apiVersion: APIVersion
    let enroll: Enroll
    let sign: Sign
    let loadResidentKeys: LoadResidentKeys

    init() throws {
        let path = builtProduct("libauthkeyd-sk.so")
        let handle = try #require(dlopen(path, RTLD_NOW | RTLD_LOCAL), "dlopen \(path): \(String(cString: dlerror()))")
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            let address = try #require(dlsym(handle, name), "\(name) is not exported")
            return unsafeBitCast(address, to: type)
        }
        apiVersion = try symbol("sk_api_version", as: APIVersion.self)
        enroll = try symbol("sk_enroll", as: Enroll.self)
        sign = try symbol("sk_sign", as: Sign.self)
        loadResidentKeys = try symbol("sk_load_resident_keys", as: LoadResidentKeys.self)
    }

    /// As OpenSSH frees a response: each buffer, then the struct.
    func free(_ response: UnsafeMutablePointer<sk_enroll_response>) {
        for buffer in [response.pointee.public_key, response.pointee.key_handle, response.pointee.signature,
                       response.pointee.attestation_cert, response.pointee.authdata] {
            Foundation.free(buffer)
        }
        Foundation.free(response)
    }

    func free(_ response: UnsafeMutablePointer<sk_sign_response>) {
        Foundation.free(response.pointee.sig_r)
        Foundation.free(response.pointee.sig_s)
        Foundation.free(response)
    }
}

/// Runs `body` with an environment variable set, as ssh-sk-helper would
/// have it from ssh's environment; the end-to-end suites run one test at a
/// time, so no other test sees it.
private func withEnvironment(_ name: String, _ value: String, _ body: () throws -> Void) throws {
    let previous = getenv(name).map { String(cString: $0) }
    setenv(name, value, 1)
    defer {
        if let previous { setenv(name, previous, 1) } else { unsetenv(name) }
    }
    try body()
}
