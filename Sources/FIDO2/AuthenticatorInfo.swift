internal import CFido2

/// An authenticator's CTAP `getInfo` reply, as libfido2 parsed it.
public struct AuthenticatorInfo: Codable, Equatable, Sendable {
    public struct Algorithm: Codable, Equatable, Sendable {
        public var type: String
        public var cose: Int

        public init(type: String, cose: Int) {
            self.type = type
            self.cose = cose
        }
    }

    public var versions: [String]
    public var extensions: [String]
    public var transports: [String]
    /// 16 bytes.
    public var aaguid: [UInt8]
    /// Options as the key reports them; an absent option is not the same as `false`.
    public var options: [String: Bool]
    public var algorithms: [Algorithm]
    public var maxMessageSize: UInt64
    public var maxCredentialCountInList: UInt64
    public var maxCredentialIDLength: UInt64
    public var firmwareVersion: UInt64
    public var pinProtocols: [UInt8]
    public var maxCredentialBlobLength: UInt64
    public var maxLargeBlobArray: UInt64
    public var minPINLength: UInt64
    /// Resident-credential slots left, when the key says (CTAP 2.1 `remainingDiscoverableCredentials`).
    public var remainingDiscoverableCredentials: Int64?
    public var preferredPlatformUVAttempts: UInt64
    public var uvModality: UInt64
    public var forcePINChange: Bool
    public var maxRPIDsForSetMinPINLength: UInt64
    public var certifications: [String: UInt64]

    public func option(_ name: String) -> Bool? { options[name] }
}

extension Device {
    /// The key's `getInfo` (`fido_dev_get_cbor_info`).
    public func info() throws(FIDO2Error) -> AuthenticatorInfo {
        try perform { (handle) throws(FIDO2Error) in
            guard let info = fido_cbor_info_new() else { throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_cbor_info_new") }
            var pointer: OpaquePointer? = info
            defer { fido_cbor_info_free(&pointer) }
            try check(fido_dev_get_cbor_info(handle, info), "fido_dev_get_cbor_info")
            return AuthenticatorInfo(info)
        }
    }

    /// PIN attempts left before the PIN blocks (`fido_dev_get_retry_count`).
    public func pinRetries() throws(FIDO2Error) -> Int {
        try perform { (handle) throws(FIDO2Error) in
            var retries: Int32 = 0
            try check(fido_dev_get_retry_count(handle, &retries), "fido_dev_get_retry_count")
            return Int(retries)
        }
    }

    /// Built-in UV attempts left (`fido_dev_get_uv_retry_count`).
    public func uvRetries() throws(FIDO2Error) -> Int {
        try perform { (handle) throws(FIDO2Error) in
            var retries: Int32 = 0
            try check(fido_dev_get_uv_retry_count(handle, &retries), "fido_dev_get_uv_retry_count")
            return Int(retries)
        }
    }
}

extension AuthenticatorInfo {
    init(_ info: OpaquePointer) {
        versions = strings(fido_cbor_info_versions_ptr(info), fido_cbor_info_versions_len(info))
        extensions = strings(fido_cbor_info_extensions_ptr(info), fido_cbor_info_extensions_len(info))
        transports = strings(fido_cbor_info_transports_ptr(info), fido_cbor_info_transports_len(info))
        aaguid = bytes(fido_cbor_info_aaguid_ptr(info), fido_cbor_info_aaguid_len(info))
        let optionNames = strings(fido_cbor_info_options_name_ptr(info), fido_cbor_info_options_len(info))
        let optionValues = fido_cbor_info_options_value_ptr(info)
        options = Dictionary(
            optionNames.enumerated().map { ($1, optionValues?[$0] ?? false) }, uniquingKeysWith: { a, _ in a })
        algorithms = (0..<fido_cbor_info_algorithm_count(info)).map { i in
            Algorithm(
                type: fido_cbor_info_algorithm_type(info, i).map { String(cString: $0) } ?? "",
                cose: Int(fido_cbor_info_algorithm_cose(info, i)))
        }
        maxMessageSize = fido_cbor_info_maxmsgsiz(info)
        maxCredentialCountInList = fido_cbor_info_maxcredcntlst(info)
        maxCredentialIDLength = fido_cbor_info_maxcredidlen(info)
        firmwareVersion = fido_cbor_info_fwversion(info)
        pinProtocols = bytes(fido_cbor_info_protocols_ptr(info), fido_cbor_info_protocols_len(info))
        maxCredentialBlobLength = fido_cbor_info_maxcredbloblen(info)
        maxLargeBlobArray = fido_cbor_info_maxlargeblob(info)
        minPINLength = fido_cbor_info_minpinlen(info)
        let remaining = fido_cbor_info_rk_remaining(info)
        remainingDiscoverableCredentials = remaining >= 0 ? remaining : nil
        preferredPlatformUVAttempts = fido_cbor_info_uv_attempts(info)
        uvModality = fido_cbor_info_uv_modality(info)
        forcePINChange = fido_cbor_info_new_pin_required(info)
        maxRPIDsForSetMinPINLength = fido_cbor_info_maxrpid_minpinlen(info)
        let certificationNames = strings(fido_cbor_info_certs_name_ptr(info), fido_cbor_info_certs_len(info))
        let certificationValues = fido_cbor_info_certs_value_ptr(info)
        certifications = Dictionary(
            certificationNames.enumerated().map { ($1, certificationValues?[$0] ?? 0) }, uniquingKeysWith: { a, _ in a })
    }
}

/// Copies a C array of C strings.
func strings(_ pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ count: Int) -> [String] {
    guard let pointer else { return [] }
    return (0..<count).compactMap { pointer[$0].map { String(cString: $0) } }
}

/// Copies a byte buffer libfido2 lends; nil or empty gives [].
func bytes(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    guard let pointer, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: count))
}
