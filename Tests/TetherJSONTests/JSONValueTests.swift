import PropertyBased
import Testing
import TetherJSON

@Suite("JSONValue: parsing and serialization")
struct JSONValueTests {
    @Test("A string literal with interpolations is a JSON string, as in [\"_id\": \"item-\\(index)\"]")
    func interpolation() {
        let index = 7
        let document: JSONValue = ["_id": "item-\(index)", "name": "fig \(index * 2)"]
        #expect(document["_id"] == .string("item-7"))
        #expect(document["name"] == .string("fig 14"))
    }

    @Test("Text round-trips through parse and serialize; keys come out sorted")
    func roundTrip() throws {
        let text = #"{"b":[1,2.5,-3e-7,true,false,null],"a":"é\n\"\\ \u0001 😀","c":{"d":{}}}"#
        let value = try JSONValue(parsing: text)
        #expect(value["a"]?.stringValue == "é\n\"\\ \u{0001} 😀")
        #expect(value["b"]?[1]?.doubleValue == 2.5)
        #expect(value.jsonText == #"{"a":"é\n\"\\ \u0001 😀","b":[1,2.5,-3e-07,true,false,null],"c":{"d":{}}}"#)
        #expect(try JSONValue(parsing: value.jsonText) == value)
        #expect(try JSONValue(parsing: Array(value.jsonBytes)) == value)
    }

    @Test("Escapes: \\uXXXX and surrogate pairs decode; whole numbers up to 2^53 print without a fraction")
    func escapesAndNumbers() throws {
        #expect(try JSONValue(parsing: #""\u00e9\ud83d\ude00\/""#) == "é😀/")
        #expect(JSONValue.number(9_007_199_254_740_991).jsonText == "9007199254740991")
        #expect(JSONValue.number(-0.0).jsonText == "0")
        #expect(JSONValue.number(.nan).jsonText == "null")
        #expect(JSONValue.number(1e300).jsonText == "1e+300")
    }

    @Test("jsonText(setting:to:) is the text of the object with that member set, whether it adds or replaces it")
    func settingAMember() async {
        // Keys that sort before, between and after one another, and ones that need escaping.
        let keys = ["_id", "id", "a", "Z", "é", "", "a\"b", "name", "😀", "a\u{1}"]
        func value(_ seed: Int) -> JSONValue {
            switch seed % 5 {
            case 0: .string("v\(seed)")
            case 1: .number(Double(seed) / 8)
            case 2: .bool(seed % 2 == 0)
            case 3: .null
            default: ["nested": .string("\\\(seed)"), "list": [.number(Double(seed)), "x"]]
            }
        }
        await propertyCheck(input: Gen.int(in: 0...999_999).array(of: 1...12)) { seeds in
            var members: [String: JSONValue] = [:]
            for seed in seeds.dropFirst() { members[keys[seed % keys.count]] = value(seed / keys.count) }
            let key = keys[seeds[0] % keys.count]
            let set = value(seeds[0] / keys.count)
            var expected = members
            expected[key] = set
            #expect(
                JSONValue.object(members).jsonText(setting: key, to: set) == JSONValue.object(expected).jsonText,
                "\(members), setting \(key)")
        }
        #expect(JSONValue.array([1]).jsonText(setting: "a", to: 2) == "[1]", "not an object: its own text")
    }

    @Test(
        "Bad text fails with what was expected, and the line and column",
        arguments: [
            ("", "line 1, column 1: expected a JSON value, found the end of the text"),
            ("{\"a\": 1,\n \"b\" 2}", "line 2, column 6: expected ':' after the member name, found '2'"),
            ("[1, 2", "line 1, column 6: expected ',' or ']' after an array element, found the end of the text"),
            ("tru", "line 1, column 1: expected a value, found 't'"),
            ("01", "line 1, column 2: expected the end of the text after the value, found '1'"),
            ("\"a\u{0001}\"", "line 1, column 3: a control character must be escaped in a string"),
            ("\"\\ud800\"", "line 1, column 8: expected a low surrogate '\\uDC00'…'\\uDFFF' after a high surrogate"),
            ("1e999", "line 1, column 1: the number 1e999 is out of range"),
            ("{} {}", "line 1, column 4: expected the end of the text after the value, found '{'"),
        ])
    func badText(text: String, message: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
        do {
            _ = try JSONValue(parsing: text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("Nesting deeper than the limit is an error, not a stack overflow; invalid UTF-8 is an error")
    func limits() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect((try? JSONValue(parsing: ok)) != nil)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test("Literals, subscripts and key paths")
    func literals() {
        let value: JSONValue = ["user": ["name": "Ada", "langs": ["en", "fr"]], "n": 3, "ok": true, "none": nil]
        #expect(value[path: ["user", "name"]] == "Ada")
        #expect(value[path: ["user", "langs"]]?[1] == "fr")
        #expect(value[path: ["user", "missing", "x"]] == nil)
        #expect(value["n"]?.intValue == 3)
        #expect(value["none"] == .null)
    }
}
