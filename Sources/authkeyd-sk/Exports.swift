import CSSHSecurityKeyAPI
import SSHSecurityKey
import SystemKit

// OpenSSH's middleware entry points (sk-api.h, version 10). ssh-sk-helper
// calls them on its one thread; each returns 0 or an SSH_SK_ERR_* code and
// writes the reason to stderr (fd 2), the one descriptor of the helper's it
// may use: 0 and 1 are OpenSSH's message channel. Nothing here traps on
// what OpenSSH passes: a null pointer or an unknown value is an error code.

/// `sk_api_version()`: the middleware API version this provider implements.
@_cdecl("sk_api_version")
public func skAPIVersion() -> UInt32 { UInt32(SSH_SK_VERSION_MAJOR) }

@_cdecl("sk_enroll")
public func skEnroll(
    _ algorithm: UInt32, _ challenge: UnsafePointer<UInt8>?, _ challengeLength: Int, _ application: UnsafePointer<CChar>?,
    _ flags: UInt8, _ pin: UnsafePointer<CChar>?, _ options: UnsafeMutablePointer<UnsafeMutablePointer<sk_option>?>?,
    _ response: UnsafeMutablePointer<UnsafeMutablePointer<sk_enroll_response>?>?
) -> Int32 {
    guard let response else { return report(ProviderError(.general, "sk_enroll: no place for the response")) }
    response.pointee = nil
    return entryPoint("sk_enroll") { () throws(ProviderError) in
        let request = EnrollRequest(
            algorithm: try keyAlgorithm(algorithm), challenge: try bytes(challenge, challengeLength, "challenge"),
            application: try text(application, "application"), flags: SSHKeyFlags(rawValue: flags),
            options: try ProviderOptions(options: options, accepted: ["device", "user"]))
        let key = try callProvider(pin: pin) { provider, pin async throws(ProviderError) in try await provider.enroll(request, pin: pin) }
        response.pointee = try CAllocation.enrollResponse(key)
    }
}

@_cdecl("sk_sign")
public func skSign(
    _ algorithm: UInt32, _ data: UnsafePointer<UInt8>?, _ dataLength: Int, _ application: UnsafePointer<CChar>?,
    _ keyHandle: UnsafePointer<UInt8>?, _ keyHandleLength: Int, _ flags: UInt8, _ pin: UnsafePointer<CChar>?,
    _ options: UnsafeMutablePointer<UnsafeMutablePointer<sk_option>?>?,
    _ response: UnsafeMutablePointer<UnsafeMutablePointer<sk_sign_response>?>?
) -> Int32 {
    guard let response else { return report(ProviderError(.general, "sk_sign: no place for the response")) }
    response.pointee = nil
    return entryPoint("sk_sign") { () throws(ProviderError) in
        let request = SignRequest(
            algorithm: try keyAlgorithm(algorithm), data: try bytes(data, dataLength, "data"),
            application: try text(application, "application"), keyHandle: try bytes(keyHandle, keyHandleLength, "key handle"),
            flags: SSHKeyFlags(rawValue: flags), options: try ProviderOptions(options: options, accepted: ["device"]))
        let signed = try callProvider(pin: pin) { provider, pin async throws(ProviderError) in try await provider.sign(request, pin: pin) }
        response.pointee = try CAllocation.signResponse(signed)
    }
}

@_cdecl("sk_load_resident_keys")
public func skLoadResidentKeys(
    _ pin: UnsafePointer<CChar>?, _ options: UnsafeMutablePointer<UnsafeMutablePointer<sk_option>?>?,
    _ keys: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<sk_resident_key>?>?>?,
    _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    guard let keys, let count else { return report(ProviderError(.general, "sk_load_resident_keys: no place for the keys")) }
    keys.pointee = nil
    count.pointee = 0
    return entryPoint("sk_load_resident_keys") { () throws(ProviderError) in
        let parsed = try ProviderOptions(options: options, accepted: ["device"])
        let found = try callProvider(pin: pin) { provider, pin async throws(ProviderError) in try await provider.loadResidentKeys(options: parsed, pin: pin) }
        keys.pointee = try CAllocation.residentKeys(found)
        count.pointee = found.count
    }
}

/// Runs one entry point's body: 0 when it returns, its code when it throws,
/// with the reason on stderr.
private func entryPoint(_ name: String, _ body: () throws(ProviderError) -> Void) -> Int32 {
    do {
        try body()
        return 0
    } catch {
        return report(error)
    }
}

private func report(_ error: ProviderError) -> Int32 {
    if let message = error.message { writeToStandardError("authkeyd-sk: \(message)\n") }
    return error.code.rawValue
}

private func keyAlgorithm(_ number: UInt32) throws(ProviderError) -> SSHKeyAlgorithm {
    guard let algorithm = SSHKeyAlgorithm(rawValue: number) else {
        throw ProviderError(.unsupported, "key type \(number) is not one of ecdsa-sk (0) and ed25519-sk (1)")
    }
    return algorithm
}

private func bytes(_ pointer: UnsafePointer<UInt8>?, _ length: Int, _ what: String) throws(ProviderError) -> [UInt8] {
    guard length >= 0, length <= maximumInputLength else { throw ProviderError(.general, "the \(what) passed is too long") }
    guard length > 0 else { return [] }
    guard let pointer else { throw ProviderError(.general, "no \(what) passed") }
    return Array(UnsafeBufferPointer(start: pointer, count: length))
}

private func text(_ pointer: UnsafePointer<CChar>?, _ what: String) throws(ProviderError) -> String {
    guard let pointer else { throw ProviderError(.general, "no \(what) passed") }
    return String(cString: pointer)
}

/// Runs one call of the provider to its end, with the environment as it
/// is now and the PIN ssh passed (nil or empty: none) copied into a buffer
/// that is zeroed when the call's last reference to it goes.
private func callProvider<T: Sendable>(
    pin: UnsafePointer<CChar>?, _ call: @escaping @Sendable (SecurityKeyProvider, SecretBytes?) async throws(ProviderError) -> T
) throws(ProviderError) -> T {
    let secret = pin.flatMap { $0.pointee == 0 ? nil : SecretBytes(cString: $0) }
    let provider = SecurityKeyProvider(environment: currentEnvironment())
    return try SecurityKeyProvider.wait { () async throws(ProviderError) in try await call(provider, secret) }
}

/// What OpenSSH passes is small (a 32-byte challenge, data to sign, a key
/// handle); a length beyond this is a caller's bug, not something to copy.
private let maximumInputLength = 1 << 20

extension ProviderOptions {
    /// From OpenSSH's NULL-terminated `struct sk_option *` array.
    init(options: UnsafeMutablePointer<UnsafeMutablePointer<sk_option>?>?, accepted: Set<String>) throws(ProviderError) {
        var parsed: [Option] = []
        var cursor = options
        while let entry = cursor?.pointee {
            guard let name = entry.pointee.name else { throw ProviderError(.general, "an option without a name") }
            parsed.append(Option(
                name: String(cString: name), value: entry.pointee.value.map { String(cString: $0) } ?? "",
                required: entry.pointee.required != 0))
            cursor = cursor?.successor()
        }
        try self.init(parsed, accepted: accepted)
    }
}
