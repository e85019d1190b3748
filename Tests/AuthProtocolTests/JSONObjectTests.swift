import AuthProtocol
import Testing

/// JSONObject keeps its members in order and finds them by name, small or
/// large (past a dozen members it keeps an index too); the encoder and
/// decoder's shortcuts for JSON's own types give what the general path gave.
@Suite struct JSONObjectTests {
    @Test func membersKeepTheirOrderAndAreFoundByName() {
        var object: JSONObject = ["b": 1, "a": 2]
        object["c"] = 3
        object["b"] = 4
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["b"] == 4)
        object["a"] = nil
        #expect(object.keys == ["b", "c"])
        #expect(object["a"] == nil)
        #expect(Array(object).map(\.key) == ["b", "c"])
    }

    @Test func aLargeObjectIsSearchedAndChangedAlike() {
        var object = JSONObject()
        for index in 0..<40 { object["k\(index)"] = .integer(Int64(index)) }
        #expect(object.count == 40)
        #expect((0..<40).allSatisfy { object["k\($0)"] == .integer(Int64($0)) })
        object["k3"] = nil
        object["k39"] = "last"
        object["k40"] = "new"
        #expect(object["k3"] == nil)
        #expect(object["k4"] == 4, "the members after a removed one are still found")
        #expect(object["k39"] == "last")
        #expect(object.keys.last == "k40")
        #expect(object.count == 40)
    }

    @Test func equalityAndHashIgnoreTheOrder() {
        let one: JSONObject = ["a": 1, "b": [true, nil]]
        let other: JSONObject = ["b": [true, nil], "a": 1]
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(one != ["a": 1, "b": [true]])
        #expect(one != ["a": 1])
    }

    struct Numbers: Codable, Equatable {
        var large: Int64
        var counter: UInt32
        var ratio: Double
        var name: String?
        var flag: Bool?
        var small: Int?
    }

    @Test func numbersAndOptionalsEncodeAndDecodeAsBefore() throws {
        let value = Numbers(large: .max, counter: .max, ratio: 0.5, name: nil, flag: false, small: -3)
        let json = try JSONValueEncoder().encode(value)
        #expect(json.jsonText == #"{"large":9223372036854775807,"counter":4294967295,"ratio":0.5,"flag":false,"small":-3}"#)
        #expect(try JSONValueDecoder().decode(Numbers.self, from: json) == value)
        let nulls: JSONValue = ["large": 1, "counter": 2, "ratio": 3, "name": nil, "flag": nil, "small": nil]
        #expect(try JSONValueDecoder().decode(Numbers.self, from: nulls) == Numbers(large: 1, counter: 2, ratio: 3))
    }

    @Test func aMemberOfTheWrongTypeIsNamed() throws {
        let wrong: [(JSONValue, String)] = [
            (["large": 1, "counter": 2, "ratio": 3, "name": 7], "name: expected a string, got a number"),
            (["large": 1, "counter": 2, "ratio": 3, "flag": "yes"], "flag: expected a boolean, got a string"),
            (["large": 1, "counter": 2, "ratio": 3, "small": 1.5], "small: expected an integer, got a number"),
            (["large": 1, "counter": -1, "ratio": 3], "counter: -1 is out of range"),
        ]
        for (json, message) in wrong {
            do {
                _ = try JSONValueDecoder().decode(Numbers.self, from: json)
                Issue.record("decoded \(json.jsonText)")
            } catch let error as JSONDecodingError {
                #expect(error.description == message)
            }
        }
    }

    /// Encodes a key twice, and a dictionary, by hand.
    struct Repeated: Encodable {
        enum Keys: String, CodingKey { case first, second, map }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("one", forKey: .first)
            try container.encode(2, forKey: .second)
            try container.encode(["z": 1, "a": 2, "m": 3], forKey: .map)
            try container.encode(true, forKey: .first)
        }
    }

    @Test func aKeyEncodedAgainKeepsItsPlaceAndDictionariesAreSorted() throws {
        #expect(try JSONValueEncoder().encode(Repeated()).jsonText == #"{"first":true,"second":2,"map":{"a":2,"m":3,"z":1}}"#)
    }

    struct Failing: Encodable {
        struct Inner: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: encoder.codingPath, debugDescription: "no"))
            }
        }
        var outer: [String: [Inner]]
    }

    @Test func anEncodingErrorHasItsPath() throws {
        do {
            _ = try JSONValueEncoder().encode(Failing(outer: ["k": [Failing.Inner()]]))
            Issue.record("encoded")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["outer"])
        }
    }
}
