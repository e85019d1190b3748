import AuthProtocol

/// One credential of a user's line in a pam_u2f authfile.
public struct EnrolledCredential: Sendable, Equatable {
    public enum KeyHandle: Sendable, Equatable {
        /// `*`: a discoverable credential, found by the relying party alone.
        case resident
        /// The credential id.
        case id([UInt8])
    }

    /// The COSE types pam_u2f writes (`es256`, `rs256`) and later
    /// versions add (`eddsa`).
    public enum Algorithm: String, Sendable, Equatable, CaseIterable {
        case es256
        case eddsa
        case rs256

        /// How many bytes of public key libfido2 gives (and pamu2fcfg
        /// writes): x ‖ y, the Ed25519 key, or modulus (256) ‖ exponent (3).
        public var publicKeyByteCount: Int {
            switch self {
            case .es256: return 64
            case .eddsa: return 32
            case .rs256: return 259
            }
        }

        /// The COSE algorithm number, as credentials.create takes it.
        public var coseAlgorithm: Int {
            switch self {
            case .es256: return -7
            case .eddsa: return -8
            case .rs256: return -257
            }
        }
    }

    /// What the line asks of each use: `+presence`, `+verification`, `+pin`.
    public struct Options: Sendable, Equatable {
        public var presence: Bool
        public var verification: Bool
        public var pin: Bool

        public init(presence: Bool = false, verification: Bool = false, pin: Bool = false) {
            self.presence = presence
            self.verification = verification
            self.pin = pin
        }

        /// pam_u2f looks for each as a substring, in any order.
        init(field: String) {
            self.init(
                presence: field.contains("+presence"), verification: field.contains("+verification"), pin: field.contains("+pin"))
        }

        /// In pamu2fcfg's order.
        public var field: String {
            (presence ? "+presence" : "") + (verification ? "+verification" : "") + (pin ? "+pin" : "")
        }
    }

    public var keyHandle: KeyHandle
    public var publicKey: [UInt8]
    public var algorithm: Algorithm
    public var options: Options

    public init(keyHandle: KeyHandle, publicKey: [UInt8], algorithm: Algorithm, options: Options) {
        self.keyHandle = keyHandle
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.options = options
    }

    /// `KEYHANDLE,PUBLICKEY,TYPE,OPTIONS` as pamu2fcfg writes it: standard
    /// base64 with padding, `*` for a resident credential.
    public var authFileEntry: String {
        let handle: String
        switch keyHandle {
        case .resident: handle = "*"
        case .id(let bytes): handle = Base64.encode(bytes)
        }
        return "\(handle),\(Base64.encode(publicKey)),\(algorithm.rawValue),\(options.field)"
    }
}
