#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension HTTPHeaders {
    /// The fields whose values are credentials unless a request says otherwise, lower-cased: `Authorization`,
    /// `Proxy-Authorization`, `Cookie`, `Set-Cookie` and the common API-key and token fields (`X-Api-Key`,
    /// `Api-Key`, `X-Auth-Token`, `X-Access-Token`, `Private-Token`, `X-Goog-Api-Key`, `X-Amz-Security-Token`,
    /// `Ocp-Apim-Subscription-Key`, `X-Vault-Token`, `X-CSRF-Token`, …). A request's
    /// ``TransportRequest/sensitiveHeaders`` start from these; their values never appear in a log line that
    /// TransportKit or an adapter writes, and never follow a redirect to another origin.
    public static let credentialFieldNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "apikey", "x-apikey",
        "x-auth-token", "x-access-token", "private-token", "x-goog-api-key", "x-amz-security-token",
        "ocp-apim-subscription-key", "x-vault-token", "x-csrf-token", "x-xsrf-token",
    ]

    /// A copy without the fields named in `names` (lower-cased) — what is left of a request's headers when it
    /// follows a redirect to another origin.
    public func removingFields(named names: Set<String>) -> HTTPHeaders {
        HTTPHeaders(fields.filter { !names.contains($0.name.lowercased()) })
    }

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
