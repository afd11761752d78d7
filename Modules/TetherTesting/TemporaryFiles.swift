import Foundation
import TetherConcurrency

/// Paths to remove when the process exits: for files a test cannot remove itself, such as a store's file that a
/// live query may still read after the test returns.
public final class TemporaryFiles: Sendable {
    /// The one list of the process.
    public static let shared = TemporaryFiles()
    private let paths = LockedValue<[String]>([])

    /// Removes `path` (a file or a directory) at exit.
    public func add(_ path: String) {
        let first = paths.withLock { paths -> Bool in
            paths.append(path)
            return paths.count == 1
        }
        if first { atexit { TemporaryFiles.shared.removeAll() } }
    }

    /// A new directory under the system's temporary directory, named `prefix` and a UUID, removed at exit.
    public func directory(_ prefix: String) throws -> String {
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        add(path)
        return path
    }

    private func removeAll() {
        for path in paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
