import AuthProtocol
import FIDO2
import SystemKit

/// A key the daemon serves: how it is reached, what it said about itself,
/// and the worker thread that owns it.
final class RegisteredKey: Sendable {
    let id: String
    let transport: Transport
    let path: String
    let manufacturer: String
    let product: String
    let vendorID: UInt16
    let productID: UInt16
    let worker: DeviceWorker
    /// What the key said when it was brought up, and again after anything
    /// that changes it (a PIN set or tried, a fingerprint enrolled): what
    /// `authenticators.list` and `.info` answer, without opening the key.
    private let snapshot: Protected<KeySnapshot>

    init(
        id: String, transport: Transport, path: String, manufacturer: String, product: String, vendorID: UInt16,
        productID: UInt16, worker: DeviceWorker, snapshot: KeySnapshot
    ) {
        self.id = id
        self.transport = transport
        self.path = path
        self.manufacturer = manufacturer
        self.product = product
        self.vendorID = vendorID
        self.productID = productID
        self.worker = worker
        self.snapshot = Protected(snapshot)
    }

    var info: AuthenticatorInfo { snapshot.withLock { $0.info } }
    var retries: Retries { snapshot.withLock { $0.retries } }

    /// Keeps a fresh snapshot; true when getInfo changed (the retries are
    /// only read, never announced).
    func update(to fresh: KeySnapshot) -> Bool {
        snapshot.withLock { kept in
            defer { kept = fresh }
            return kept.info != fresh.info
        }
    }

    /// The key as the protocol lists it.
    func wire(name: String?) -> Authenticator {
        let info = info
        return Authenticator(
            id: id, path: path, transport: transport, manufacturer: manufacturer, product: product,
            vendorId: Int(vendorID), productId: Int(productID), aaguid: uuidString(info.aaguid), name: name,
            pin: info.supports.clientPIN.isSupported, pinSet: info.supports.clientPIN.isOn,
            uv: info.supports.userVerification.isSupported, uvSet: info.supports.userVerification.isOn,
            rk: info.supports.residentKeys,
            credMgmt: info.supports.credentialManagement,
            bioEnroll: info.supports.bioEnrollment.isSupported,
            alwaysUv: info.supports.alwaysUV.isOn, ctap: info.isU2FOnly ? .u2f : .fido2)
    }

    /// getInfo as the protocol carries it, with the retries last read.
    func wireInfo() -> AuthenticatorInfoWire {
        let (info, retries) = snapshot.withLock { ($0.info, $0.retries) }
        return AuthenticatorInfoWire(
            versions: info.versions, extensions: info.extensions, aaguid: uuidString(info.aaguid), options: info.options,
            algorithms: info.algorithms.map { .init(type: $0.type, alg: $0.cose) },
            maxMsgSize: Int(info.maxMessageSize), pinProtocols: info.pinProtocols.map(Int.init),
            maxCredentialCountInList: Int(info.maxCredentialCountInList),
            maxCredentialIdLength: Int(info.maxCredentialIDLength), transports: info.transports,
            firmwareVersion: Int(info.firmwareVersion), minPinLength: Int(info.minPINLength),
            forcePinChange: info.forcePINChange, maxCredBlobLength: Int(info.maxCredentialBlobLength),
            remainingDiscoverableCredentials: info.remainingDiscoverableCredentials.map(Int.init),
            uvModality: Int(info.uvModality), pinRetries: retries.pin, uvRetries: retries.uv)
    }
}

/// What the daemon keeps of a key between uses.
struct KeySnapshot: Sendable, Equatable {
    var info: AuthenticatorInfo
    var retries: Retries
}

/// PIN and UV attempts left, as a key reports them; nil where it has no
/// PIN set, or no built-in verification.
struct Retries: Sendable, Equatable {
    var pin: Int?
    var uv: Int?
}

extension Device {
    /// getInfo and the attempts left, read on the key's thread. A key busy
    /// with another program fails the whole read, to be tried again; other
    /// failures of the retries leave them unknown.
    func snapshot() throws(FIDO2Error) -> KeySnapshot {
        let info = try infoOrU2FProfile()
        guard !info.isU2FOnly else { return KeySnapshot(info: info, retries: Retries()) }
        func attempts(_ read: () throws(FIDO2Error) -> Int) throws(FIDO2Error) -> Int? {
            do { return try read() } catch where error.isKeyBusy { throw error } catch { return nil }
        }
        return KeySnapshot(info: info, retries: Retries(
            pin: info.supports.clientPIN.isSupported ? try attempts(pinRetries) : nil,
            uv: info.supports.userVerification.isSupported ? try attempts(uvRetries) : nil))
    }
}

/// 16 bytes as a UUID: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (other
/// lengths as plain hex). Built byte by byte: it runs for every key in
/// every `authenticators.list`.
func uuidString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    let dashesBefore: Set<Int> = bytes.count == 16 ? [4, 6, 8, 10] : []
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2 + dashesBefore.count)
    for (index, byte) in bytes.enumerated() {
        if dashesBefore.contains(index) { text.append(UInt8(ascii: "-")) }
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
