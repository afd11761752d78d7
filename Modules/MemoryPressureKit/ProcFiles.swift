#if canImport(Glibc)
import Glibc

/// Small readers for `/proc` and cgroup files, which report sizes of 0 and so are read until end of file.
enum ProcFiles {
    /// The file's text, or nil when it cannot be opened or read (the reason in `errno`).
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Why the last `open`/`read` failed, in words.
    static var lastError: String {
        String(cString: strerror(errno))
    }

    /// The process's cgroup paths from `<procRoot>/self/cgroup`: the v2 path ("0::/x") and the v1 memory
    /// controller's path ("N:memory:/x"), when present.
    static func cgroupPaths(procRoot: String) -> (v2: String?, v1Memory: String?) {
        guard let text = read(procRoot + "/self/cgroup") else { return (nil, nil) }
        var v2: String?
        var v1: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0", fields[1].isEmpty { v2 = String(fields[2]) }
            if fields[1].split(separator: ",").contains("memory") { v1 = String(fields[2]) }
        }
        return (v2, v1)
    }
}
#endif
