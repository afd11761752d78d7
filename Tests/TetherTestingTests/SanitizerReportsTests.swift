import Testing
import TetherTesting

/// A child's sanitizer reports reach CI's log: found in its output, and forwarded under the child's name.
@Suite("SanitizerReports: a child's sanitizer reports, found in its output")
struct SanitizerReportsTests {
    // Built at run time, so that this file's own text never reads as a report to CI's check of the log.
    static let warning = "WARNING: " + "ThreadSanitizer: data race (pid=4242)"

    @Test("Each report runs from its WARNING line to its SUMMARY line; the lines around it are not part of it")
    func reports() {
        let output = [
            "ready", "==================", Self.warning, "  Write of size 8 at 0x7b0c by thread T2:",
            "SUMMARY: ThreadSanitizer: data race cache.swift:12 in write", "==================", "wrote 300",
        ]
        #expect(
            SanitizerReports.reports(in: output) == [
                [
                    Self.warning, "  Write of size 8 at 0x7b0c by thread T2:",
                    "SUMMARY: ThreadSanitizer: data race cache.swift:12 in write",
                ]
            ])
        #expect(SanitizerReports.reports(in: ["ready", "wrote 300", "SUMMARY: not a report"]).isEmpty)
    }

    @Test("A report cut short (the child was killed mid-report) runs to the end of the output")
    func cutShort() {
        let output = ["ready", "ERROR: " + "AddressSanitizer: heap-use-after-free", "  READ of size 8"]
        #expect(SanitizerReports.reports(in: output) == [Array(output.dropFirst())])
    }

    @Test("Forwarded reports name the child, one block per report")
    func forwarded() {
        var written: [String] = []
        let report = [Self.warning, "SUMMARY: ThreadSanitizer: data race"]
        SanitizerReports.forward(["ready"] + report + report, child: "tether-probe (pid 7)") { written.append($0) }
        #expect(written.count == 2)
        #expect(
            written.first
                == "tether-probe (pid 7): a sanitizer report in the child's output:\n" + report.joined(separator: "\n")
                + "\n")
        SanitizerReports.forward(["ready", "done"], child: "quiet") { written.append($0) }
        #expect(written.count == 2)
    }
}
