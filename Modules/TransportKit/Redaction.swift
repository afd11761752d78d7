extension HTTPHeaders {
    /// The fields whose values are credentials, lower-cased: `Authorization`, `Proxy-Authorization`, `Cookie` and
    /// `Set-Cookie`. Their values never appear in a log line that TransportKit or an adapter writes.
    public static let credentialFieldNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// What a log line shows in place of a credential.
    public static let redactedValue = "<redacted>"

    /// A copy with the values of ``credentialFieldNames`` (and of `alsoRedacting`, any case) replaced by
    /// ``redactedValue``; names and order are kept, so a log still shows that the field was there.
    public func redacted(alsoRedacting extraNames: Set<String> = []) -> HTTPHeaders {
        let extra = Set(extraNames.map { $0.lowercased() })
        return HTTPHeaders(
            fields.map { field in
                let name = field.name.lowercased()
                let secret = Self.credentialFieldNames.contains(name) || extra.contains(name)
                return Field(name: field.name, value: secret ? Self.redactedValue : field.value)
            }
        )
    }
}

extension URL {
    /// The URL as a string fit for a log line: a password in it (`https://user:secret@host/`) is replaced by
    /// `<redacted>`.
    public var redactedForLogging: String {
        guard password(percentEncoded: true) != nil,
            var components = URLComponents(url: self, resolvingAgainstBaseURL: false)
        else { return absoluteString }
        components.percentEncodedPassword = "redacted"
        return components.string?.replacing(":redacted@", with: ":\(HTTPHeaders.redactedValue)@") ?? absoluteString
    }
}
