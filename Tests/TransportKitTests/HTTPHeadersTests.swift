import Testing
import TransportKit

@Suite("HTTP headers and methods")
struct HTTPHeadersTests {
    @Test("Lookups ignore case; setting replaces every field of the name; order is kept")
    func caseInsensitive() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-Trace": "1"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        headers.add(name: "x-trace", value: "2")
        #expect(headers.values(for: "X-TRACE") == ["1", "2"])
        headers["X-Trace"] = "3"
        #expect(headers.values(for: "x-trace") == ["3"])
        headers["x-trace"] = nil
        #expect(headers["X-Trace"] == nil)
        #expect(headers.fields.map(\.name) == ["Content-Type"])
    }

    @Test("Names that differ by more than case do not match")
    func distinctNames() {
        let headers: HTTPHeaders = ["ETag": "\"v1\""]
        #expect(headers["ETags"] == nil)
        #expect(headers["E-Tag"] == nil)
        #expect(headers["etag"] == "\"v1\"")
    }

    @Test("Methods are upper-cased tokens")
    func methods() {
        #expect(HTTPMethod(rawValue: "get") == .get)
        #expect(("patch" as HTTPMethod) == .patch)
        #expect(HTTPMethod(rawValue: "PROPFIND").description == "PROPFIND")
    }
}
