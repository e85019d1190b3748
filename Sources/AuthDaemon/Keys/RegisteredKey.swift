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
    /// getInfo, cached: read when the key arrives and again after anything
    /// that changes it (a PIN set, a fingerprint enrolled).
    private let cachedInfo: Protected<AuthenticatorInfo>

    init(
        id: String, transport: Transport, path: String, manufacturer: String, product: String, vendorID: UInt16,
        productID: UInt16, worker: DeviceWorker, info: AuthenticatorInfo
    ) {
        self.id = id
        self.transport = transport
        self.path = path
        self.manufacturer = manufacturer
        self.product = product
        self.vendorID = vendorID
        self.productID = productID
        self.worker = worker
        cachedInfo = Protected(info)
    }

    var info: AuthenticatorInfo { cachedInfo.withLock { $0 } }

    /// Reads getInfo again; true when it changed.
    func refreshInfo() async -> Bool {
        guard let fresh = try? await worker.run({ device throws(FIDO2Error) in try device.infoOrU2FProfile() }) else { return false }
        return cachedInfo.withLock { info in
            defer { info = fresh }
            return info != fresh
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

    /// getInfo as the protocol carries it, with the retries read now.
    func wireInfo(pinRetries: Int?, uvRetries: Int?) -> AuthenticatorInfoWire {
        let info = info
        return AuthenticatorInfoWire(
            versions: info.versions, extensions: info.extensions, aaguid: uuidString(info.aaguid), options: info.options,
            algorithms: info.algorithms.map { .init(type: $0.type, alg: $0.cose) },
            maxMsgSize: Int(info.maxMessageSize), pinProtocols: info.pinProtocols.map(Int.init),
            maxCredentialCountInList: Int(info.maxCredentialCountInList),
            maxCredentialIdLength: Int(info.maxCredentialIDLength), transports: info.transports,
            firmwareVersion: Int(info.firmwareVersion), minPinLength: Int(info.minPINLength),
            forcePinChange: info.forcePINChange, maxCredBlobLength: Int(info.maxCredentialBlobLength),
            remainingDiscoverableCredentials: info.remainingDiscoverableCredentials.map(Int.init),
            uvModality: Int(info.uvModality), pinRetries: pinRetries, uvRetries: uvRetries)
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
