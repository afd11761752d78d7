/// An HTTP request method. The common ones are static members; any other token is allowed.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The method's token, upper-cased as sent.
    public let rawValue: String

    /// Makes a method from its token; the token is upper-cased, so `"get"` and `"GET"` are the same method.
    public init(rawValue: String) {
        self.rawValue = rawValue.uppercased()
    }

    /// Makes a method from a string literal.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// The method's token.
    public var description: String { rawValue }
}
