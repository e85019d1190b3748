import CBOR
import Crypto
import FIDO2
import SystemKit
import TestSupport
import Testing
import VirtualKey
import VirtualKeyDevice

/// Large blobs through libfido2's own client (`fido_dev_largeblob_*`): the
/// largeBlobKey of a discoverable credential, blobs stored, read, replaced
/// and removed under it, kept in the state file and wiped by a reset.
@Suite struct LargeBlobTests {
    let directory = TemporaryDirectory()

    /// A discoverable credential made with the largeBlobKey extension, and its key.
    static func credentialWithLargeBlobKey(on device: Device, userID: [UInt8] = [1], pin: PIN = "1234") throws -> [UInt8] {
        var request = registrationRequest(userID: userID, residentKey: true)
        request.largeBlobKey = true
        let credential = try device.makeCredential(request, pin: pin)
        #expect(credential.largeBlobKey.count == 32)
        return credential.largeBlobKey
    }

    @Test func setGetReplaceAndRemove() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        let device = try key.openDevice()
        let info = try device.info()
        #expect(info.options["largeBlobs"] == true)
        #expect(info.supports.largeBlobs)
        #expect(info.extensions.contains("largeBlobKey"))
        #expect(info.maxLargeBlobArray == 1024)

        let first = try Self.credentialWithLargeBlobKey(on: device, userID: [1])
        let second = try Self.credentialWithLargeBlobKey(on: device, userID: [2])
        #expect(first != second)
        #expect(try device.largeBlob(key: first) == nil, "nothing stored yet")
        #expect(try device.largeBlobArray() == [0x80])

        try device.setLargeBlob(Array("first blob".utf8), key: first, pin: "1234")
        try device.setLargeBlob(Array("second blob".utf8), key: second, pin: "1234")
        #expect(try device.largeBlob(key: first) == Array("first blob".utf8))
        #expect(try device.largeBlob(key: second) == Array("second blob".utf8))
        #expect(try CBOR.decode(try device.largeBlobArray()).arrayValue?.count == 2)

        try device.setLargeBlob(Array("replaced".utf8), key: first, pin: "1234")
        #expect(try device.largeBlob(key: first) == Array("replaced".utf8))
        #expect(try CBOR.decode(try device.largeBlobArray()).arrayValue?.count == 2, "replaced, not added")

        // The assertion returns the same key the registration did.
        var assertion = assertionRequest()
        assertion.largeBlobKey = true
        let statements = try device.getAssertion(assertion, pin: "1234").statements
        #expect(Set(statements.map(\.largeBlobKey)) == [first, second])
        // Credential management lists it too (enumerateCredentials 0x0B).
        let stored = try device.storedCredentials(relyingPartyID: "example.org", pin: "1234")
        #expect(Set(stored.map(\.largeBlobKey)) == [first, second])

        try device.removeLargeBlob(key: first, pin: "1234")
        #expect(try device.largeBlob(key: first) == nil)
        #expect(try device.largeBlob(key: second) == Array("second blob".utf8))
        #expect(throws: FIDO2Error.notFound) { try device.removeLargeBlob(key: first, pin: "1234") }
    }

    @Test func writesNeedTheRightPINAndFitTheArray() throws {
        let key = try makeKey { $0.initialPIN = "1234" }
        let device = try key.openDevice()
        let blobKey = try Self.credentialWithLargeBlobKey(on: device)
        #expect(throws: FIDO2Error.pinInvalid) { try device.setLargeBlob([1, 2, 3], key: blobKey, pin: "9999") }
        #expect(try device.largeBlob(key: blobKey) == nil)

        // Random bytes do not compress: 1100 of them cannot fit in 1024.
        let tooLarge = secureRandomBytes(1100)
        #expect(throws: FIDO2Error.largeblobStorageFull) { try device.setLargeBlob(tooLarge, key: blobKey, pin: "1234") }
        let fits = secureRandomBytes(900)
        try device.setLargeBlob(fits, key: blobKey, pin: "1234")
        #expect(try device.largeBlob(key: blobKey) == fits, "read back in fragments of maxMsgSize - 64 and whole")
    }

    /// CTAP 2.1 §6.10.2: a key with neither PIN nor fingerprint takes a
    /// write without a pinUvAuthToken (libfido2 alone would ask it for one
    /// and fail). The device knows the key's options again after it: once
    /// a PIN is set, a write without it is refused and one with it taken.
    @Test func aKeyWithNeitherPINNorFingerprintTakesAWriteWithoutAToken() throws {
        let key = try makeKey { $0.fingerprintSensor = false }
        let device = try key.openDevice()
        var request = registrationRequest(userID: [1], residentKey: true)
        request.largeBlobKey = true
        let blobKey = try device.makeCredential(request).largeBlobKey
        try #require(blobKey.count == 32)

        try device.setLargeBlob(Array("no PIN".utf8), key: blobKey, pin: nil)
        #expect(try device.largeBlob(key: blobKey) == Array("no PIN".utf8))
        #expect(device.supportsPermissions && device.supportsPIN, "getInfo read again after the write")

        try device.setPIN("1234")
        try device.reopen()
        #expect(throws: FIDO2Error.pinRequired) { try device.setLargeBlob([1], key: blobKey, pin: nil) }
        try device.setLargeBlob(Array("with a PIN".utf8), key: blobKey, pin: "1234")
        #expect(try device.largeBlob(key: blobKey) == Array("with a PIN".utf8))
    }

    @Test func theArrayIsKeptInTheStateFileAndClearedByAReset() throws {
        let path = directory.file("key.state")
        let blobKey: [UInt8]
        do {
            let key = try makeKey { $0.stateFile = path; $0.initialPIN = "1234" }
            let device = try key.openDevice()
            blobKey = try Self.credentialWithLargeBlobKey(on: device)
            try device.setLargeBlob(Array("kept".utf8), key: blobKey, pin: "1234")
        }
        let restarted = try makeKey { $0.stateFile = path }
        let device = try restarted.openDevice()
        #expect(try device.largeBlob(key: blobKey) == Array("kept".utf8))
        var assertion = assertionRequest()
        assertion.largeBlobKey = true
        #expect(try device.getAssertion(assertion, pin: "1234").statement(at: 0).largeBlobKey == blobKey)

        try device.reset()
        #expect(try device.largeBlobArray() == [0x80])
        #expect(try device.largeBlob(key: blobKey) == nil)
        let afterReset = try makeKey { $0.stateFile = path }
        #expect(try afterReset.openDevice().largeBlobArray() == [0x80], "the reset reached the state file")
    }

    @Test func aStateFileFromBeforeLargeBlobsStillLoads() throws {
        // A version 1 state file as written before large blobs: no
        // largeBlobArray member, resident credentials without largeBlobKey.
        let path = directory.file("old.state")
        do {
            let key = try makeKey { $0.stateFile = path; $0.initialPIN = "1234" }
            _ = try key.openDevice().makeCredential(registrationRequest(residentKey: true), pin: "1234")
        }
        let stored = try #require(try AtomicFile.read(path))
        var map = try #require(try CBOR.decode(stored).mapValue)
        #expect(map["largeBlobArray"] == nil, "an empty array is not written")
        map["largeBlobArray"] = nil
        try AtomicFile.write(CBOR.map(map).encoded(), to: path)
        let device = try makeKey { $0.stateFile = path }.openDevice()
        #expect(try device.largeBlobArray() == [0x80])
        var assertion = assertionRequest()
        assertion.largeBlobKey = true
        #expect(try device.getAssertion(assertion, pin: "1234").statement(at: 0).largeBlobKey == [], "made without the extension")
    }
}
