/// Which protocol the key speaks to hosts (`ctap=` in a spec).
public enum CTAPPersonality: String, Sendable, Equatable, CaseIterable {
    /// CTAP 2.1 over CTAPHID_CBOR; CTAPHID_MSG is not offered (INIT's NMSG bit).
    case fido2
    /// CTAP1/U2F only, as the keys made before FIDO2 were: ISO 7816-4 APDUs
    /// over CTAPHID_MSG, no CTAPHID_CBOR (INIT's CBOR bit clear), so
    /// libfido2 drives the key through its U2F path.
    case u2f
}
