internal import CCrypto

/// Builds the small X.509 v3 certificates of a virtual attestation chain:
/// a self-signed CA and the attestation certificates it signs.
///
/// Only what FIDO attestation needs is supported: a subject of RDNs,
/// basicConstraints, and the FIDO AAGUID extension
/// (`id-fido-gen-ce-aaguid`, 1.3.6.1.4.1.45724.1.1.4, WebAuthn §8.2.1).
public struct CertificateBuilder {
    public var subject: [(attribute: String, value: String)]
    public var issuer: [(attribute: String, value: String)]
    public var serialNumber: UInt64
    public var isCertificateAuthority: Bool
    public var aaguid: [UInt8]?
    /// Seconds before and after "now" that the certificate is valid.
    public var validFrom: Int = -86_400
    public var validFor: Int = 20 * 365 * 86_400

    public init(
        subject: [(attribute: String, value: String)],
        issuer: [(attribute: String, value: String)]? = nil,
        serialNumber: UInt64,
        isCertificateAuthority: Bool,
        aaguid: [UInt8]? = nil
    ) {
        self.subject = subject
        self.issuer = issuer ?? subject
        self.serialNumber = serialNumber
        self.isCertificateAuthority = isCertificateAuthority
        self.aaguid = aaguid
    }

    /// The DER certificate for `publicKey`, signed with `signer` (ECDSA with SHA-256).
    public func build(publicKey: P256.PublicKey, signer: P256.PrivateKey) throws(CryptoError) -> [UInt8] {
        let certificate = try unwrap(X509_new(), "X509_new")
        defer { X509_free(certificate) }
        try check(X509_set_version(certificate, 2), "X509_set_version")
        try check(ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), serialNumber), "ASN1_INTEGER_set_uint64")
        _ = try unwrap(X509_gmtime_adj(X509_getm_notBefore(certificate), validFrom), "X509_gmtime_adj")
        _ = try unwrap(X509_gmtime_adj(X509_getm_notAfter(certificate), validFor), "X509_gmtime_adj")
        try check(X509_set_pubkey(certificate, publicKey.key), "X509_set_pubkey")
        try Self.fill(X509_get_subject_name(certificate), with: subject)
        try Self.fill(X509_get_issuer_name(certificate), with: issuer)

        // basicConstraints: SEQUENCE { BOOLEAN TRUE } for a CA, an empty SEQUENCE otherwise.
        let basicConstraints: [UInt8] = isCertificateAuthority ? [0x30, 0x03, 0x01, 0x01, 0xFF] : [0x30, 0x00]
        try Self.addExtension(to: certificate, nid: NID_basic_constraints, critical: true, der: basicConstraints)
        if let aaguid {
            // The extension's value is an OCTET STRING holding the 16-byte AAGUID.
            let object = try unwrap(OBJ_txt2obj("1.3.6.1.4.1.45724.1.1.4", 1), "OBJ_txt2obj")
            defer { ASN1_OBJECT_free(object) }
            try Self.addExtension(to: certificate, object: object, critical: false, der: [0x04, UInt8(aaguid.count)] + aaguid)
        }

        guard X509_sign(certificate, signer.key, EVP_sha256()) > 0 else { throw CryptoError("X509_sign") }
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { throw CryptoError("i2d_X509") }
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(certificate, &cursor)
        }
        return der
    }

    private static func fill(_ name: OpaquePointer?, with entries: [(attribute: String, value: String)]) throws(CryptoError) {
        for entry in entries {
            let value = Array(entry.value.utf8)
            try check(
                X509_NAME_add_entry_by_txt(name, entry.attribute, MBSTRING_UTF8, value, Int32(value.count), -1, 0),
                "X509_NAME_add_entry_by_txt(\(entry.attribute))")
        }
    }

    private static func addExtension(to certificate: OpaquePointer, nid: Int32, critical: Bool, der: [UInt8]) throws(CryptoError) {
        let object = try unwrap(OBJ_nid2obj(nid), "OBJ_nid2obj")
        try addExtension(to: certificate, object: object, critical: critical, der: der)
    }

    private static func addExtension(
        to certificate: OpaquePointer, object: OpaquePointer, critical: Bool, der: [UInt8]
    ) throws(CryptoError) {
        let value = try unwrap(ASN1_OCTET_STRING_new(), "ASN1_OCTET_STRING_new")
        defer { ASN1_OCTET_STRING_free(value) }
        try check(ASN1_OCTET_STRING_set(value, der, Int32(der.count)), "ASN1_OCTET_STRING_set")
        let ext = try unwrap(X509_EXTENSION_create_by_OBJ(nil, object, critical ? 1 : 0, value), "X509_EXTENSION_create_by_OBJ")
        defer { X509_EXTENSION_free(ext) }
        try check(X509_add_ext(certificate, ext, -1), "X509_add_ext")
    }
}

/// Facts read back from a DER certificate, for tests and diagnostics.
public struct CertificateSummary: Sendable {
    public let subject: String
    public let issuer: String
    public let publicKey: P256.PublicKey

    public init(der: [UInt8]) throws(CryptoError) {
        let certificate = try der.withUnsafeBufferPointer { (buffer) throws(CryptoError) -> OpaquePointer in
            var cursor = buffer.baseAddress
            return try unwrap(d2i_X509(nil, &cursor, buffer.count), "d2i_X509")
        }
        defer { X509_free(certificate) }
        subject = Self.oneLine(X509_get_subject_name(certificate))
        issuer = Self.oneLine(X509_get_issuer_name(certificate))
        let key = try unwrap(X509_get0_pubkey(certificate), "X509_get0_pubkey")
        publicKey = try P256.PublicKey(x962Representation: try P256.encodedPublicKey(of: key))
    }

    /// Whether the certificate's signature verifies with `issuerKey`.
    public static func isSigned(_ der: [UInt8], by issuerKey: P256.PublicKey) -> Bool {
        der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return false }
            defer { X509_free(certificate) }
            return X509_verify(certificate, issuerKey.key) == 1
        }
    }

    private static func oneLine(_ name: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        guard X509_NAME_oneline(name, &buffer, Int32(buffer.count)) != nil else { return "" }
        return string(fromNulTerminated: buffer)
    }
}
