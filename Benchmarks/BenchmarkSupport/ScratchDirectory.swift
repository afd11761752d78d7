import Foundation
import TetherConcurrency

/// The directory for this process's database files, `<prefix>-<pid>` under the temporary directory, made if missing.
///
/// The files outlive the run — a run ends with the benchmark's stores still open, and an interrupted one never gets
/// to clean up — so the first call for a prefix removes the directories of that prefix whose process is gone: a
/// run leaves at most its own behind (about 9 MB for `LiveQueryBenchmarks`), where 233 had piled up in `/tmp`.
public func scratchDirectory(_ prefix: String) -> String {
    let temporary = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
    if sweptPrefixes.withLock({ $0.insert(prefix).inserted }) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix(prefix + "-") {
            guard let pid = pid_t(name.dropFirst(prefix.count + 1)), pid != getpid(), !isRunning(pid) else {
                continue
            }
            try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
        }
    }
    let path = temporary.appendingPathComponent("\(prefix)-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The prefixes swept in this process.
private let sweptPrefixes = LockedValue<Set<String>>([])

/// Whether process `pid` exists (signal 0 checks without sending anything).
private func isRunning(_ pid: pid_t) -> Bool {
    kill(pid, 0) == 0 || errno != ESRCH
}
