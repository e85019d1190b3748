import CBOR
import Crypto

/// The key's attestation identity: a virtual attestation CA and the
/// attestation certificate it issued to this key, as a vendor would burn
/// into a real key at the factory.
///
/// A `packed` attestation carries `x5c = [attestation certificate, CA]`,
/// so that libfido2's `fido_cred_verify` and relying-party libraries can
/// check the chain. It proves only that the credential came from an
/// authkeyd virtual key: the CA is generated per key, not held by a vendor.
struct AttestationIdentity: Equatable {
    var privateKey: [UInt8]
    var certificate: [UInt8]
    var caCertificate: [UInt8]

    static func generate(aaguid: [UInt8], productName: String) throws(CTAP2Status) -> AttestationIdentity {
        do {
            let caKey = try P256.PrivateKey()
            let caSubject = [
                (attribute: "C", value: "US"), (attribute: "O", value: "authkeyd"),
                (attribute: "CN", value: "authkeyd Virtual Key Attestation CA"),
            ]
            let caCertificate = try CertificateBuilder(
                subject: caSubject, serialNumber: UInt64.random(in: 1...UInt64(Int64.max)), isCertificateAuthority: true
            ).build(publicKey: caKey.publicKey, signer: caKey)

            // WebAuthn §8.2.1: C, O, OU "Authenticator Attestation", CN;
            // basicConstraints CA:FALSE; the AAGUID extension.
            let key = try P256.PrivateKey()
            let certificate = try CertificateBuilder(
                subject: [
                    (attribute: "C", value: "US"), (attribute: "O", value: "authkeyd"),
                    (attribute: "OU", value: "Authenticator Attestation"), (attribute: "CN", value: productName),
                ],
                issuer: caSubject, serialNumber: UInt64.random(in: 1...UInt64(Int64.max)),
                isCertificateAuthority: false, aaguid: aaguid
            ).build(publicKey: key.publicKey, signer: caKey)
            return AttestationIdentity(privateKey: key.rawRepresentation, certificate: certificate, caCertificate: caCertificate)
        } catch {
            throw .other
        }
    }

    var cbor: CBOR {
        .map(["privateKey": .bytes(privateKey), "certificate": .bytes(certificate), "caCertificate": .bytes(caCertificate)])
    }

    init(privateKey: [UInt8], certificate: [UInt8], caCertificate: [UInt8]) {
        self.privateKey = privateKey
        self.certificate = certificate
        self.caCertificate = caCertificate
    }

    init?(cbor: CBOR) {
        guard let map = cbor.mapValue, let key = map["privateKey"]?.bytesValue,
            let certificate = map["certificate"]?.bytesValue, let ca = map["caCertificate"]?.bytesValue
        else { return nil }
        self.init(privateKey: key, certificate: certificate, caCertificate: ca)
    }
}
