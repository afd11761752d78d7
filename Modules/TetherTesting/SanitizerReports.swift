import Foundation

/// A sanitizer's reports in a child process's output, copied to this process's standard error.
///
/// A child that ``ProbeProcess`` starts writes its output, sanitizer reports included, to a file that the test reads
/// and CI's log never shows. CI's sanitizer stage fails on a report in its log, so ``ProbeProcess/finish(within:)``
/// copies every report it finds there — also from a child the test killed, whose exit status says nothing.
package enum SanitizerReports {
    /// The reports in `output`: each from its `WARNING: ThreadSanitizer` (or `ERROR: AddressSanitizer`, …) line to
    /// the `SUMMARY:` line that ends it, or to the end of the output when it was cut short.
    package static func reports(in output: [String]) -> [[String]] {
        var reports: [[String]] = []
        var current: [String]?
        for line in output {
            if current == nil, Self.opens(line) { current = [] }
            guard current != nil else { continue }
            current!.append(line)
            if line.hasPrefix("SUMMARY: ") {
                reports.append(current!)
                current = nil
            }
        }
        if let current { reports.append(current) }
        return reports
    }

    /// Writes the reports in `output` to `sink` (the standard error), each under a line naming the child.
    package static func forward(
        _ output: [String], child: String,
        to sink: (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        for report in reports(in: output) {
            sink((["\(child): a sanitizer report in the child's output:"] + report).joined(separator: "\n") + "\n")
        }
    }

    private static func opens(_ line: String) -> Bool {
        for sanitizer in ["ThreadSanitizer", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer"]
        where line.contains("WARNING: \(sanitizer)") || line.contains("ERROR: \(sanitizer)") {
            return true
        }
        return false
    }
}
