import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Resource {
    /// The resource at `subpath` below this one: appended to this resource's path (without its query) with a
    /// joining slash, under the same rules as ``Service/resource(_:)`` — it never leaves this resource's path.
    ///
    /// ```swift
    /// core.resource("/items").child("42")   // …/items/42
    /// ```
    public func child(_ subpath: String) -> Resource {
        guard let url else { return core.invalidResource(text: urlString + "/" + subpath, problem: invalidReason) }
        switch ResourceAddress.normalizedPath(subpath) {
        case .success(let path):
            var parent = ResourceAddress.withoutQuery(url)
            while parent.hasSuffix("/") { parent.removeLast() }
            return core.resource(absoluteURL: parent + path)
        case .failure(let problem):
            return core.invalidResource(text: urlString + "/" + subpath, problem: problem.message)
        }
    }

    /// The resource at `href` resolved against this resource's URL, as a browser resolves a link: `"7"` is a
    /// sibling, `"../users/1"` goes up, `"/x"` is host-relative, and an absolute URL goes anywhere.
    public func relative(_ href: String) -> Resource {
        guard let url else { return core.invalidResource(text: href, problem: invalidReason) }
        guard let resolved = URL(string: href, relativeTo: url)?.absoluteURL else {
            return core.invalidResource(text: href, problem: "\"\(href)\" is not a valid relative URL")
        }
        return core.resource(absoluteURL: resolved)
    }

    /// ``relative(_:)`` for an `href` that may be missing (a link in a response that is not always there): nil
    /// when `href` is nil.
    public func optionalRelative(_ href: String?) -> Resource? {
        href.map(relative)
    }

    /// The resource with the query parameter `name` set to `value` (removed when nil). Parameters are sorted by
    /// name, so equal parameters in any order give the same resource.
    public func withParam(_ name: String, _ value: String?) -> Resource {
        withParams([name: value])
    }

    /// The resource with each of `parameters` set (removed where nil), parameters sorted by name.
    public func withParams(_ parameters: [String: String?]) -> Resource {
        guard let url else { return core.invalidResource(text: urlString, problem: invalidReason) }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return core.invalidResource(text: urlString, problem: "\"\(urlString)\" has no URL components")
        }
        var items = (components.percentEncodedQueryItems ?? []).filter { parameters[decoded($0.name)] == nil }
        for (name, value) in parameters {
            guard let value else { continue }
            items.append(URLQueryItem(name: Self.encodeQueryComponent(name), value: Self.encodeQueryComponent(value)))
        }
        items.sort { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
        components.percentEncodedQueryItems = items.isEmpty ? nil : items
        return core.resource(absoluteURL: components.url)
    }

    private var invalidReason: String {
        invalid?.problem ?? "the resource has no valid URL"
    }

    private func decoded(_ component: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(component.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Percent-encodes everything but unreserved characters, so `+`, `&` and `=` in values survive.
    static func encodeQueryComponent(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            ResourceAddress.appendEncoded(byte, keeping: ResourceAddress.isUnreserved, to: &output)
        }
        return output
    }
}
