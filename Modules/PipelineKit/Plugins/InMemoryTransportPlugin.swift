import Foundation
import TransportKit

/// `type: in-memory` — TransportKit's `InMemoryTransport` with routes from configuration: a service with no
/// network, for previews, demos and tests.
///
/// ```yaml
/// transport:
///   type: in-memory
///   routes:
///     - url: https://api.example.com/v1/items
///       status: 200
///       content_type: application/json
///       body: '[{"id": 1}]'
///       delay: 50ms
/// ```
/// A request with no route fails as the in-memory transport does, with a clear error naming the URL.
package struct InMemoryTransportPlugin: PipelinePlugin {
    /// "in-memory".
    package let type = "in-memory"

    /// One scripted answer.
    package struct Route: Decodable, Sendable {
        /// The absolute URL it answers.
        package var url: String
        /// The method it answers; nil for all.
        package var method: String?
        /// The status.
        package var status: Int
        /// The body.
        package var body: String
        /// The `Content-Type`.
        package var contentType: String?
        /// More header fields.
        package var headers: [String: String]
        /// How long before the answer.
        package var delay: Duration

        /// The keys.
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case url, method, status, body
            case contentType = "content_type"
            case headers, delay
        }

        /// Decodes a route; `url` is required.
        package init(from decoder: any Decoder) throws {
            let settings = try decoder.settings(CodingKeys.self)
            url = try settings.require(.url, as: String.self) ?? ""
            if settings.contains(.url),
                ServiceConfiguration.problem(withBaseURL: url.components(separatedBy: "?")[0]) != nil
            {
                try settings.invalid(.url, "a route needs an absolute http(s) URL (found '\(url)')")
            }
            method = try settings.decode(.method, as: String.self)
            status = try settings.decode(
                .status, default: 200, where: { (100...599).contains($0) }, "must be an HTTP status (100-599)")
            body = try settings.decode(.body, default: "")
            contentType = try settings.decode(.contentType, as: String.self)
            headers = try settings.decode(.headers, default: [:])
            delay = try settings.duration(.delay, default: .zero, allowsZero: true)
        }
    }

    /// The plugin's settings.
    package struct Settings: Decodable, Sendable {
        /// The scripted answers.
        package var routes: [Route]

        /// The keys.
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case routes
        }

        /// No routes.
        package init() {
            routes = []
        }

        /// Decodes the settings.
        package init(from decoder: any Decoder) throws {
            let settings = try decoder.settings(CodingKeys.self)
            routes = try settings.decodeList(.routes, as: Route.self)
        }
    }

    /// Makes the plugin.
    package init() {}

    /// No routes.
    package var defaultSettings: Settings { Settings() }

    /// Makes a transport answering the routes.
    package func make(_ settings: Settings, context: AssemblyContext) throws -> TransportComponent {
        let transport = InMemoryTransport()
        for route in settings.routes {
            var headers = HTTPHeaders()
            if let contentType = route.contentType { headers["Content-Type"] = contentType }
            for (name, value) in route.headers.sorted(by: { $0.key < $1.key }) { headers[name] = value }
            let reply = InMemoryTransport.Reply(
                status: route.status, headers: headers, body: Data(route.body.utf8), delay: route.delay)
            transport.route(route.method.map { HTTPMethod(rawValue: $0.uppercased()) }, route.url, reply: reply)
        }
        return TransportComponent(transport)
    }
}
