import DocumentStoreKit
import Foundation
import PersistenceKit

/// The file-system side of opening a database: the directory must exist and be writable, and a new file is
/// created with permissions 0600 before SQLite opens it (SQLite gives its `-wal` and `-shm` files the same).
package enum DatabaseFile {
    /// Checks the directory, and creates the file (0600) if it does not exist.
    static func prepare(_ path: String) throws(PersistenceError) {
        let directory = (path as NSString).deletingLastPathComponent
        let parent = directory.isEmpty ? "." : directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw PersistenceError(
                .missingDirectory, "the directory \(parent) does not exist; create it first", file: path)
        }
        guard access(parent, W_OK) == 0 else {
            throw PersistenceError(
                .readOnly,
                "the directory \(parent) is not writable (\(String(cString: strerror(errno)))); SQLite needs to create the -wal and -shm files beside the database",
                file: path)
        }
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
            return
        }
        let code = errno
        guard code == EEXIST else {
            throw PersistenceError(
                kind(for: code), "cannot create the file: \(String(cString: strerror(code)))", file: path)
        }
        // O_EXCL also fails on a symbolic link whose target does not exist: name the target rather than call the
        // file read-only.
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path),
            !FileManager.default.fileExists(atPath: path)
        {
            throw PersistenceError(
                .cannotOpen, "the path is a symbolic link to \(target), which does not exist", file: path)
        }
        guard access(path, R_OK | W_OK) == 0 else {
            let code = errno
            throw PersistenceError(
                kind(for: code), "the file cannot be read and written: \(String(cString: strerror(code)))", file: path)
        }
    }

    /// The kind of a failure to create or open a file with `code` (errno).
    private static func kind(for code: Int32) -> PersistenceError.Kind {
        switch code {
        case EACCES, EROFS, EPERM: .readOnly
        case ENOSPC, EDQUOT: .diskFull
        default: .cannotOpen
        }
    }

    /// The bytes an unprivileged process may still write on the file system that holds `path` (its directory when
    /// the file does not exist), or nil when that cannot be told.
    static func availableBytes(near path: String) -> UInt64? {
        var info = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        for candidate in [path, directory.isEmpty ? "." : directory] where statvfs(candidate, &info) == 0 {
            return UInt64(info.f_bavail) * UInt64(info.f_frsize)
        }
        return nil
    }

    /// Renames the file and its `-wal` and `-shm` companions to `<path>.corrupt-<timestamp>…`; returns the new path.
    static func moveAside(_ path: String, now: Date = Date()) throws(PersistenceError) -> String {
        let stamp = Int(now.timeIntervalSince1970 * 1000)
        let destination = "\(path).corrupt-\(stamp)"
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            guard rename(path + suffix, destination + suffix) == 0 else {
                throw PersistenceError(
                    .cannotOpen, "cannot move the damaged file aside: \(String(cString: strerror(errno)))", file: path)
            }
        }
        return destination
    }

    /// Whether `first` and `second` name the same file: the same path once `.`, `..` and symbolic links are resolved,
    /// or — for files that exist — the same device and inode (a hard link).
    package static func isSameFile(_ first: String, _ second: String) -> Bool {
        func canonical(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        }
        if canonical(first) == canonical(second) { return true }
        var a = stat()
        var b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// The permission bits of the file.
    static func permissions(of path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_mode & 0o777)
    }
}
