internal import CFido2

/// A relying party with discoverable credentials on a key.
public struct StoredRelyingParty: Codable, Hashable, Sendable {
    public var id: String
    public var name: String?
    /// SHA-256 of the id, which is how the key addresses it.
    public var idHash: [UInt8]
}

/// A discoverable credential as the key lists it.
public struct StoredCredential: Codable, Hashable, Sendable {
    public var credentialID: [UInt8]
    public var user: UserEntity
    public var protection: CredentialProtection?
    /// The credential's public key in libfido2's form for `algorithm`:
    /// x‖y for ES256, the 32-byte point for EdDSA, the modulus then a
    /// 3-byte exponent for RS256 (`fido_cred_pubkey_ptr`).
    public var publicKey: [UInt8]
    /// The COSE algorithm of that key (`fido_cred_type`, which libfido2
    /// sets from the listed key), nil when it is not one libfido2 knows.
    public var algorithm: COSEAlgorithm?
    public var largeBlobKey: [UInt8]
}

/// Discoverable-credential slots in use and free.
public struct CredentialMetadata: Codable, Hashable, Sendable {
    public var existing: UInt64
    public var remaining: UInt64

    public init(existing: UInt64, remaining: UInt64) {
        self.existing = existing
        self.remaining = remaining
    }
}

// MARK: - credentialManagement (CTAP 2.1 §6.8)

extension Device {
    /// How many discoverable credentials the key holds and can still hold
    /// (`fido_credman_get_dev_metadata`).
    public func credentialMetadata(pin: PIN?) throws(FIDO2Error) -> CredentialMetadata {
        try perform { (handle) throws(FIDO2Error) in
            guard let metadata = fido_credman_metadata_new() else {
                throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_credman_metadata_new")
            }
            var pointer: OpaquePointer? = metadata
            defer { fido_credman_metadata_free(&pointer) }
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_credman_get_dev_metadata(handle, metadata, pin), "fido_credman_get_dev_metadata")
            }
            return CredentialMetadata(
                existing: fido_credman_rk_existing(metadata), remaining: fido_credman_rk_remaining(metadata))
        }
    }

    /// The relying parties that have discoverable credentials on the key
    /// (`fido_credman_get_dev_rp`). A key with none answers an empty list.
    public func storedRelyingParties(pin: PIN?) throws(FIDO2Error) -> [StoredRelyingParty] {
        try perform { (handle) throws(FIDO2Error) in
            guard let list = fido_credman_rp_new() else {
                throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_credman_rp_new")
            }
            var pointer: OpaquePointer? = list
            defer { fido_credman_rp_free(&pointer) }
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_credman_get_dev_rp(handle, list, pin), "fido_credman_get_dev_rp")
            }
            return (0..<fido_credman_rp_count(list)).map { i in
                StoredRelyingParty(
                    id: fido_credman_rp_id(list, i).map { String(cString: $0) } ?? "",
                    name: fido_credman_rp_name(list, i).map { String(cString: $0) },
                    idHash: bytes(fido_credman_rp_id_hash_ptr(list, i), fido_credman_rp_id_hash_len(list, i)))
            }
        }
    }

    /// The discoverable credentials of one relying party (`fido_credman_get_dev_rk`).
    public func storedCredentials(relyingPartyID: String, pin: PIN?) throws(FIDO2Error) -> [StoredCredential] {
        try perform { (handle) throws(FIDO2Error) in
            guard let list = fido_credman_rk_new() else {
                throw FIDO2Error(code: FIDO_ERR_INTERNAL, function: "fido_credman_rk_new")
            }
            var pointer: OpaquePointer? = list
            defer { fido_credman_rk_free(&pointer) }
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_credman_get_dev_rk(handle, relyingPartyID, list, pin), "fido_credman_get_dev_rk")
            }
            return (0..<fido_credman_rk_count(list)).compactMap { i in
                guard let credential = fido_credman_rk(list, i) else { return nil }
                let handle = credential
                return StoredCredential(
                    credentialID: bytes(fido_cred_id_ptr(handle), fido_cred_id_len(handle)),
                    user: UserEntity(
                        id: bytes(fido_cred_user_id_ptr(handle), fido_cred_user_id_len(handle)),
                        name: fido_cred_user_name(handle).map { String(cString: $0) },
                        displayName: fido_cred_display_name(handle).map { String(cString: $0) }),
                    protection: CredentialProtection(rawValue: fido_cred_prot(handle)),
                    publicKey: bytes(fido_cred_pubkey_ptr(handle), fido_cred_pubkey_len(handle)),
                    algorithm: COSEAlgorithm(rawValue: fido_cred_type(handle)),
                    largeBlobKey: bytes(fido_cred_largeblob_key_ptr(handle), fido_cred_largeblob_key_len(handle)))
            }
        }
    }

    /// Deletes one discoverable credential (`fido_credman_del_dev_rk`).
    public func deleteStoredCredential(id: [UInt8], pin: PIN?) throws(FIDO2Error) {
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_credman_del_dev_rk(handle, id, id.count, pin), "fido_credman_del_dev_rk")
            }
        }
    }

    /// Replaces the user name and display name of a discoverable credential;
    /// the user id must be the one it has (`fido_credman_set_dev_rk`).
    public func updateStoredCredentialUser(credentialID: [UInt8], user: UserEntity, pin: PIN?) throws(FIDO2Error) {
        let credential = try Credential()
        let cred = credential.handle
        try check(fido_cred_set_id(cred, credentialID, credentialID.count), "fido_cred_set_id")
        try check(
            fido_cred_set_user(cred, user.id, user.id.count, user.name, user.displayName, user.icon), "fido_cred_set_user")
        try perform { (handle) throws(FIDO2Error) in
            try withOptionalCString(pin) { (pin) throws(FIDO2Error) in
                try check(fido_credman_set_dev_rk(handle, cred, pin), "fido_credman_set_dev_rk")
            }
        }
    }
}
