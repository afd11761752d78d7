import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How URLs become resources' keys: one key per URL, so that one URL is one resource.
///
/// A URL under the service's base is keyed by the rest of it (`/items/1?a=1`), which for a well-formed path is the
/// path itself: looking up `core.resource("/items/1")` then costs one hash, no URL parsing and no allocation.
/// Any other URL is keyed by its absolute string; a URL that is not valid by the text given, prefixed `invalid:`.
enum ResourceAddress {
    /// Why a path cannot be appended to a base.
    struct Problem: Error {
        let message: String
    }

    /// The canonical form of `path` below a base: exactly one leading `/`, percent-encoding where a path needs it
    /// (so `?` and `#` stay in the path), and no `.` or `..` segments, which would escape the base.
    static func normalizedPath(_ path: String) -> Result<String, Problem> {
        var path = path
        let needsWork = path.withUTF8 { bytes -> Bool in
            // Exactly one leading slash (more are collapsed by the slow path).
            guard bytes.first == UInt8(ascii: "/"), bytes.count < 2 || bytes[1] != UInt8(ascii: "/") else {
                return true
            }
            var segmentStart = 0
            for index in 0...bytes.count {
                if index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                    let length = index - segmentStart
                    if length == 1 || length == 2,
                        bytes[segmentStart] == UInt8(ascii: "."),
                        length == 1 || bytes[segmentStart + 1] == UInt8(ascii: ".")
                    {
                        return true
                    }
                    segmentStart = index + 1
                    continue
                }
                let byte = bytes[index]
                if byte == UInt8(ascii: "%") || !isPathCharacter(byte) { return true }
            }
            return false
        }
        guard needsWork else { return .success(path) }
        return slowNormalizedPath(path)
    }

    private static func slowNormalizedPath(_ path: String) -> Result<String, Problem> {
        var output = "/"
        let bytes = Array(path.utf8.drop { $0 == UInt8(ascii: "/") })
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) {
                output += String(decoding: bytes[index...(index + 2)], as: UTF8.self).uppercased()
                index += 3
                continue
            }
            appendEncoded(byte, keeping: isPathCharacter, to: &output)
            index += 1
        }
        for segment in output.split(separator: "/", omittingEmptySubsequences: false) {
            let decoded = String(segment).replacing("%2E", with: ".")
            if decoded == "." || decoded == ".." {
                return .failure(
                    Problem(
                        message: "the path \"\(path)\" has a \"\(segment)\" segment, which would leave the base URL"))
            }
        }
        return .success(output)
    }

    /// Appends `byte` to `output` as itself when `keeping` says so, else percent-encoded (`%2F`).
    static func appendEncoded(_ byte: UInt8, keeping: (UInt8) -> Bool, to output: inout String) {
        if keeping(byte) {
            output.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            let hex = String(byte, radix: 16, uppercase: true)
            output += hex.count == 1 ? "%0" + hex : "%" + hex
        }
    }

    /// RFC 3986 unreserved characters: all a query component keeps unencoded, so `+`, `&` and `=` survive.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// RFC 3986 `pchar` and `/`, without `%` (handled apart).
    static func isPathCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"),
            UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
            UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    static func isHex(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }

    /// Whether `url` can be requested: absolute, with a scheme and (for http and https) a host.
    static func problem(with url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), !scheme.isEmpty else {
            return "\"\(url.absoluteString)\" is not an absolute URL (it has no scheme)"
        }
        if scheme == "http" || scheme == "https", url.host?.isEmpty ?? true {
            return "\"\(url.absoluteString)\" has no host"
        }
        return nil
    }

    /// The URL without its query and fragment, as configuration globs match it.
    static func withoutQuery(_ url: URL) -> String {
        let string = url.absoluteString
        guard let end = string.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return string }
        return String(string[..<end])
    }
}
