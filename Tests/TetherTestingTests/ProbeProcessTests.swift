import Foundation
import Testing
import TetherTesting

@Suite("ProbeProcess: a child's status and output, and a deadline for one that hangs")
struct ProbeProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    @Test("A child that exits: its status and every line it wrote, not killed")
    func exits() async throws {
        try await TemporaryDirectory.with { directory in
            let child = try ProbeProcess(
                executableURL: Self.shell, ["-c", "echo one; echo two >&2; exit 3"], in: directory)
            let outcome = await child.finish()
            #expect(outcome.status == 3)
            #expect(outcome.lines == ["one", "two"])
            #expect(outcome.killedAtDeadline == nil)
            #expect(outcome.description == #"exited with 3; its output: ["one", "two"]"#)
        }
    }

    @Test("A child still running at the deadline is killed, and the outcome says so with the lines it got to")
    func hangs() async throws {
        try await TemporaryDirectory.with { directory in
            let child = try ProbeProcess(
                executableURL: Self.shell, ["-c", "echo started; exec sleep 600"], in: directory)
            try await eventually { child.lines == ["started"] }
            let outcome = await child.finish(within: .milliseconds(200))
            #expect(outcome.status == SIGKILL)
            let deadline = DeadlineScale.scaled(.milliseconds(200))  // 0.2 s as written
            #expect(outcome.killedAtDeadline == deadline)
            #expect(outcome.lines == ["started"])
            #expect(outcome.description.hasPrefix("killed, still running after \(deadline)"), "\(outcome)")
            #expect(!child.process.isRunning)
        }
    }
}
