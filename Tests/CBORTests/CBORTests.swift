import CBOR
import TestSupport
import Testing

@Suite struct CBOREncodingTests {
    /// Vectors from RFC 8949 Appendix A.
    @Test(arguments: [
        (CBOR.int(0), "00"), (.int(23), "17"), (.int(24), "1818"), (.int(1000), "1903e8"),
        (.int(1_000_000), "1a000f4240"), (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"),
        (.int(-1), "20"), (.int(-100), "3863"), (.int(-1000), "3903e7"),
        (.bytes([1, 2, 3, 4]), "4401020304"), (.text("IETF"), "6449455446"), (.text("ü"), "62c3bc"),
        (.array([1, [2, 3], [4, 5]]), "8301820203820405"), (.bool(false), "f4"), (.bool(true), "f5"),
        (.null, "f6"), (.tagged(1, .int(1_363_896_240)), "c11a514b67b0"),
    ])
    func rfc8949Vectors(item: CBOR, expected: String) throws {
        #expect(hex(item.encoded()) == expected)
        #expect(try CBOR.decode(item.encoded()) == item)
    }

    /// CTAP 2.1 §8: keys sorted by major type, then length, then bytes.
    @Test func mapKeysAreWrittenInCTAP2CanonicalOrder() {
        let cose: CBORMap = [-3: .bytes([3]), 3: .int(-7), -1: 1, 1: 2, -2: .bytes([2])]
        #expect(hex(CBOR.map(cose).encoded()) == "a5010203262001214102224103")
        let mixed: CBORMap = ["bb": 1, "a": 2, 10: 3, 100: 4]
        // 10, 100 (unsigned), then "a" before "bb" (shorter first).
        #expect(hex(CBOR.map(mixed).encoded()) == "a40a03186404616102626262" + "01")
    }

    @Test func mapSubscriptsReplaceAndRemove() {
        var map: CBORMap = [1: "a"]
        map[1] = "b"
        map["x"] = 2
        #expect(map.count == 2)
        #expect(map[1] == "b")
        map[1] = nil
        #expect(map.count == 1)
        #expect(map == ["x": 2])
    }
}

@Suite struct CBORDecodingTests {
    @Test func rejectsTruncatedInput() {
        #expect(throws: CBORDecodingError.truncated) { try CBOR.decode([0x44, 1, 2]) }
        #expect(throws: CBORDecodingError.truncated) { try CBOR.decode([0x19, 0x01]) }
        #expect(throws: CBORDecodingError.truncated) { try CBOR.decode([]) }
    }

    @Test func rejectsIndefiniteLengths() {
        #expect(throws: CBORDecodingError.indefiniteLength) { try CBOR.decode([0x9F, 0x01, 0xFF]) }
        #expect(throws: CBORDecodingError.indefiniteLength) { try CBOR.decode([0x5F, 0x41, 0x00, 0xFF]) }
    }

    @Test func rejectsReservedAndUnsupportedValues() {
        #expect(throws: CBORDecodingError.reservedAdditionalInformation) { try CBOR.decode([0x1C]) }
        #expect(throws: CBORDecodingError.unsupportedSimpleValue) { try CBOR.decode([0xE0]) }
    }

    @Test func rejectsDuplicateKeysAndBadUTF8() {
        #expect(throws: CBORDecodingError.duplicateMapKey) { try CBOR.decode([0xA2, 0x01, 0x01, 0x01, 0x02]) }
        #expect(throws: CBORDecodingError.invalidUTF8) { try CBOR.decode([0x62, 0xC3, 0x28]) }
    }

    @Test func rejectsTrailingBytesButPrefixDecodingReportsLength() throws {
        #expect(throws: CBORDecodingError.trailingBytes) { try CBOR.decode([0x01, 0x02]) }
        let (item, length) = try CBORDecoder().decodePrefix([0x82, 0x01, 0x02, 0xFF, 0xFF])
        #expect(item == [1, 2])
        #expect(length == 3)
    }

    @Test func limitsNesting() throws {
        let deep = [UInt8](repeating: 0x81, count: 10_000) + [0x00]
        #expect(throws: CBORDecodingError.nestingTooDeep) { try CBOR.decode(deep) }
        let shallow = [UInt8](repeating: 0x81, count: 4) + [0x00]
        #expect(try CBORDecoder(maxDepth: 4).decode(shallow).arrayValue?.count == 1)
        #expect(throws: CBORDecodingError.nestingTooDeep) { try CBORDecoder(maxDepth: 3).decode(shallow) }
    }

    @Test func forgedLengthsDoNotAllocate() {
        // An array claiming 2^32 elements in a 6-byte input.
        #expect(throws: CBORDecodingError.truncated) { try CBOR.decode([0x9B, 0, 0, 0, 1, 0, 0, 0, 0]) }
        #expect(throws: CBORDecodingError.truncated) { try CBOR.decode([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }

    @Test func decodesFloatsSoCallersCanRejectThem() throws {
        #expect(try CBOR.decode([0xF9, 0x3C, 0x00]) == .float(1.0))
        #expect(try CBOR.decode([0xFB, 0x3F, 0xF1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A]) == .float(1.1))
    }

    @Test func intValueCoversBothSigns() {
        #expect(CBOR.int(-7).intValue == -7)
        #expect(CBOR.unsigned(.max).intValue == nil)
        #expect(CBOR.text("x").intValue == nil)
    }
}

