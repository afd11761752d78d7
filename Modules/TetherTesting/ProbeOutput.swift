import Foundation

/// The child's side of ``ProbeProcess``: lines that the test reads while the child runs, and a failure that ends it.
///
/// ```swift
/// ProbeOutput.say("ready")
/// guard arguments.count == 2 else { ProbeOutput.fail("usage: my-probe <path> <count>") }
/// ```
public enum ProbeOutput {
    /// Writes a line straight to the standard output (unbuffered: the test reads it while the child runs).
    public static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Writes `probe: <message>` to the standard error (which ``ProbeProcess`` collects with the output) and exits
    /// with status 2.
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("probe: \(message)\n".utf8))
        exit(2)
    }
}
