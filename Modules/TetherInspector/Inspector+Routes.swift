import Foundation  // Bundle, for the page's files
import Hummingbird

extension Inspector {
    /// The page's files, served from the target's resources.
    static let files: [String: (name: String, type: String)] = [
        "/": ("index.html", "text/html; charset=utf-8"),
        "/inspector.js": ("inspector.js", "text/javascript; charset=utf-8"),
        "/inspector.css": ("inspector.css", "text/css; charset=utf-8"),
    ]

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        if let token = configuration.token { router.add(middleware: TokenMiddleware(token: token)) }
        router.get("/api/v1/inspection") { [self] _, _ in
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let body = try encoder.encode(inspect())
            return Response(
                status: .ok,
                headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        for (path, file) in Self.files {
            let contents = Self.resource(file.name)
            router.get(RouterPath(path)) { _, _ in
                guard let contents else { return Response(status: .notFound) }
                return Response(
                    status: .ok,
                    headers: [
                        .contentType: file.type,
                        // The page runs only its own script, and sends nothing elsewhere.
                        .contentSecurityPolicy:
                            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'",
                    ],
                    body: .init(byteBuffer: ByteBuffer(bytes: contents)))
            }
        }
        return router
    }

    /// A file of the page, read from the target's resources.
    static func resource(_ name: String) -> Data? {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources") else {
            return nil
        }
        return try? Data(contentsOf: url)
    }
}

/// Refuses every request without the token: `Authorization: Bearer <token>`, or `?token=<token>` (how the page's
/// address carries it in a browser) — 401 otherwise.
struct TokenMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let token: String

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let bearer = request.headers[.authorization].map { $0 == "Bearer \(token)" } ?? false
        let query = request.uri.queryParameters["token"].map { String($0) == token } ?? false
        guard bearer || query else {
            return Response(
                status: .unauthorized, headers: [.wwwAuthenticate: "Bearer realm=\"tether-inspector\""],
                body: .init(byteBuffer: ByteBuffer(string: "a token is required\n")))
        }
        return try await next(request, context)
    }
}
