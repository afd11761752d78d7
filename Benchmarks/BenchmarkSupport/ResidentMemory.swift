import Foundation

/// The process's resident memory, as Linux reports it in `/proc/self/status`: what a probe with `ps` or `top`
/// sees, C heap, Swift objects, SQLite's pages and mapped files alike. Nil where there is no such file.
public enum ResidentMemory {
    /// Resident bytes now (`VmRSS`).
    public static var current: Int? { field("VmRSS:") }

    /// The most resident bytes since the process started or since ``resetPeak()`` (`VmHWM`).
    public static var peak: Int? { field("VmHWM:") }

    /// Starts a new peak at the current resident size (writing 5 to `/proc/self/clear_refs`; Linux 4.0 and later).
    public static func resetPeak() {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return }
        _ = write(descriptor, "5", 1)
        close(descriptor)
    }

    private static func field(_ name: String) -> Int? {
        // Read with read(2): a /proc file states its size as 0, so a read of "the whole file" may bring nothing.
        let descriptor = open("/proc/self/status", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 16 << 10)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return nil }
        let status = String(decoding: bytes[..<count], as: UTF8.self)
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let kilobytes = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
                .flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
