import Logging
import RegistryKit
import TetherConcurrency
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServiceCore {
    /// The resource at `path` below the base URL: one instance per URL, from any thread.
    ///
    /// The path is always appended to the base URL, whether or not it begins with `/`: it never changes the host
    /// and never leaves the base path. Characters a path cannot hold are percent-encoded (so `?` and `#` stay in the
    /// path; use ``Resource/withParam(_:_:)`` for a query), and a `.` or `..` segment makes the resource invalid.
    /// An invalid resource is still a resource: its loads fail with a ``ResourceError`` saying what was wrong.
    ///
    /// ```swift
    /// service.resource("/items/42")   // https://api.example.com/v1/items/42
    /// service.resource("items/42")    // the same resource
    /// ```
    func resource(_ path: String) -> Resource {
        guard let base else {
            return invalidResource(text: path, problem: baseProblem ?? "the service has no base URL")
        }
        switch ResourceAddress.normalizedPath(path) {
        case .success(let path):
            // With a query on the base, it ends every key (and URL) below it: an absolute URL finds the same resource.
            let key = baseQuery.isEmpty ? path : path + baseQuery
            return resources.instance(for: key) { makeResource(key: key, absolute: base + key) }
        case .failure(let problem):
            return invalidResource(text: path, problem: problem.message)
        }
    }

    /// The resource at `url`, which may be anywhere; nil or invalid gives an invalid resource (see ``resource(_:)``).
    func resource(absoluteURL url: URL?) -> Resource {
        guard let url else { return invalidResource(text: "nil", problem: "no URL was given") }
        let spelling = url.absoluteString
        if let resource = resources.instance(forAlias: spelling) { return resource }
        return resource(parsed: url, spelling: spelling)
    }

    /// The resource at the URL `urlString`; nil or not a URL gives an invalid resource (see ``resource(_:)``).
    ///
    /// A URL looked up before costs one lock and two hashes: its text is an alias of the resource's key in the
    /// registry. Only the first lookup of a spelling parses and standardizes it, which costs microseconds.
    func resource(absoluteURL urlString: String?) -> Resource {
        guard let urlString else { return invalidResource(text: "nil", problem: "no URL was given") }
        if let resource = resources.instance(forAlias: urlString) { return resource }
        guard let url = URL(string: urlString) else {
            return invalidResource(text: urlString, problem: "\"\(urlString)\" is not a valid URL")
        }
        return resource(parsed: url, spelling: urlString)
    }

    /// The slow path of the absolute lookups: checks and standardizes `url`, finds or makes its resource, and
    /// remembers `spelling` as an alias of its key.
    private func resource(parsed url: URL, spelling: String) -> Resource {
        if let problem = ResourceAddress.problem(with: url) {
            return invalidResource(text: url.absoluteString, problem: problem)
        }
        // Standardizing removes `.` and `..` path segments and changes nothing else: a URL whose text has no "/."
        // has none and is its own standard form — made absolute, if it was relative to another — and is not parsed
        // again (standardizing and parsing cost more than the rest of making the resource).
        let text = url.absoluteString
        let hasDots = Self.mayHaveDotSegments(text)
        let absolute = hasDots ? url.standardized.absoluteString : text
        let parsed = hasDots ? nil : url.baseURL == nil ? url : url.absoluteURL
        let key = key(forAbsolute: absolute)
        let resource = resources.instance(for: key) { makeResource(key: key, absolute: absolute, url: parsed) }
        resources.addAlias(spelling, for: key)
        return resource
    }

    /// A URL under the base (`base/…`) is keyed by the rest of it, as ``resource(_:)`` keys paths (the base's
    /// query included); any other, the base itself included, by its whole absolute string.
    func key(forAbsolute absolute: String) -> String {
        guard let base, absolute.hasPrefix(base) else { return absolute }
        let rest = absolute.dropFirst(base.count)
        return rest.first == "/" ? String(rest) : absolute
    }

    /// Whether `text` may hold a `.` or `..` path segment: it has "/." somewhere ("/.well-known" too, which costs
    /// only a standardization that changes nothing).
    static func mayHaveDotSegments(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if previous == UInt8(ascii: "/"), byte == UInt8(ascii: ".") { return true }
            previous = byte
        }
        return false
    }

    /// Called under the registry's lock: must not call the registry. `url` is `absolute` parsed, when the caller
    /// has it already.
    private func makeResource(key: String, absolute: String, url: URL? = nil) -> Resource {
        guard let url = url ?? URL(string: absolute) else {
            return Resource(
                core: self, key: key, url: nil,
                invalid: InvalidAddress(text: absolute, problem: "\"\(absolute)\" is not a valid URL"))
        }
        logging.cache.trace("created resource", metadata: ["url": "\(absolute)"])
        return Resource(core: self, key: key, url: url, invalid: nil)
    }

    /// A resource for input that is not a valid URL: canonical too (the same text gives the same resource), so that
    /// its error is observed like any other.
    func invalidResource(text: String, problem: String) -> Resource {
        // Every load of the resource fails with this problem, so it is only a debug line here.
        logging.configuration.debug("invalid resource URL", metadata: ["input": "\(text)", "problem": "\(problem)"])
        let key = "invalid:" + text
        return resources.instance(for: key) {
            Resource(core: self, key: key, url: nil, invalid: InvalidAddress(text: text, problem: problem))
        }
    }
}

/// The input that did not make a valid URL, and why.
struct InvalidAddress: Sendable {
    let text: String
    let problem: String
}
