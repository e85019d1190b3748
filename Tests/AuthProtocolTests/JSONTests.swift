import AuthProtocol
import Testing

@Suite struct JSONParserTests {
    func parse(_ text: String, depth: Int = 64) throws -> JSONValue {
        try JSONParser(maxDepth: depth).parse(Array(text.utf8))
    }

    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#" {"s":"a\"b\\c\u00e9\ud83d\ude00","n":-12,"f":1.5e2,"t":true,"z":null,"a":[1,[],{}]} "#)
        #expect(value["s"] == .string("a\"b\\cé😀"))
        #expect(value["n"] == .integer(-12))
        #expect(value["f"] == .double(150))
        #expect(value["t"] == .bool(true))
        #expect(value["z"] == .null)
        #expect(value["a"] == [1, [], .object([:])])
        #expect(try parse("9223372036854775807") == .integer(.max))
        #expect(try parse("9223372036854775808") == .double(9223372036854775808))
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "+1", ".5", "1e", "tru", "nul", "\"abc", "'x'",
        "{\"a\" 1}", "[1 2]", "{1:2}", "\"\\x\"", "\"\\ud800\"", "\"\\udc00x\"", "\"a\u{01}b\"", "1 2", "{}{}",
        "NaN", "Infinity", "\u{00}",
    ])
    func rejectsWhatIsNotJSON(text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test func rejectsInvalidUTF8AndDuplicateKeys() {
        #expect(throws: JSONParseError.self) { try JSONParser().parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParseError.self) { try parse(#"{"a":1,"a":2}"#) }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        do {
            _ = try parse(deep)
            Issue.record("10,000 levels parsed")
        } catch let error as JSONParseError {
            #expect(error.kind == .nestingTooDeep(limit: 64))
        }
        let sixtyFour = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parse(sixtyFour) }
        #expect(throws: JSONParseError.self) { try parse("[" + sixtyFour + "]") }
    }

    @Test func serialisationRoundTrips() throws {
        let value: JSONValue = ["text": "line\nbreak \"quoted\" \u{01} é", "list": [1, .double(2.5), true, nil], "empty": .object([:])]
        let text = value.jsonText
        #expect(!text.contains("\n"), "one line")
        #expect(try parse(text) == value)
        #expect(JSONValue.double(.nan).jsonText == "null")
    }
}

@Suite struct JSONCodingTests {
    struct Sample: Codable, Equatable {
        var name: String
        var count: Int
        var ratio: Double?
        var tags: [String]
        var nested: Nested?
        struct Nested: Codable, Equatable { var flag: Bool }
    }

    @Test func roundTripsThroughJSONValue() throws {
        let sample = Sample(name: "a", count: 3, ratio: nil, tags: ["x"], nested: .init(flag: true))
        let value = try JSONValueEncoder().encode(sample)
        #expect(value["ratio"] == nil, "nil optionals are left out")
        #expect(value["nested"]?["flag"] == true)
        #expect(try JSONValueDecoder().decode(Sample.self, from: value) == sample)
    }

    @Test func errorsNameThePath() throws {
        let value: JSONValue = ["name": "a", "count": "three", "tags": []]
        do {
            _ = try JSONValueDecoder().decode(Sample.self, from: value)
            Issue.record("decoded a string as a number")
        } catch let error as JSONDecodingError {
            #expect(error.description == "count: expected an integer, got a string")
        }
        do {
            _ = try JSONValueDecoder().decode(Sample.self, from: ["count": 1, "tags": [1]])
        } catch let error as JSONDecodingError {
            #expect(error.description == "name: is required")
        }
        do {
            _ = try JSONValueDecoder().decode(Sample.self, from: ["name": "n", "count": 1, "tags": ["ok", 7]])
        } catch let error as JSONDecodingError {
            #expect(error.description == "tags[1]: expected a string, got a number")
        }
    }
}
