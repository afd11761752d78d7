import Foundation

/// A fresh directory under the system's temporary directory, removed after use.
struct TemporaryDirectory {
    let path: String

    func file(_ name: String) -> String {
        path + "/" + name
    }

    static func with<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
        let path = NSTemporaryDirectory() + "tether-sqlite-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(TemporaryDirectory(path: path))
    }
}
