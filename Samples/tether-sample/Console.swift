import Foundation
import TetherConcurrency

/// Where the sample writes: sections and lines (unless `--quiet`), progress (a redrawn bar on a terminal, a
/// line every quarter otherwise), checks (always, with ✔ or ✘) and the summary (always).
final class Console: Sendable {
    let quiet: Bool
    let isTerminal: Bool
    private let state = LockedValue<(failures: [String], lastQuarter: Int, drawing: Bool)>(([], -1, false))

    init(quiet: Bool) {
        self.quiet = quiet
        self.isTerminal = isatty(STDOUT_FILENO) == 1
    }

    func section(_ title: String) {
        guard !quiet else { return }
        write("\n" + title)
    }

    func line(_ text: String) {
        guard !quiet else { return }
        write("   " + text)
    }

    /// Shows `done` of `total` for `label`.
    func progress(_ label: String, done: Int, total: Int) {
        guard !quiet, total > 0 else { return }
        let fraction = Double(done) / Double(total)
        if isTerminal {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
            state.withLock { $0.drawing = true }
            FileHandle.standardOutput.write(
                Data(String(format: "\r   %@ %@ %3d%%", label, bar, Int(fraction * 100)).utf8))
        } else {
            let quarter = Int(fraction * 4)
            let isNew = state.withLock { state -> Bool in
                guard quarter > state.lastQuarter else { return false }
                state.lastQuarter = quarter
                return true
            }
            if isNew { write("   \(label): \(quarter * 25)% (\(done)/\(total))") }
        }
    }

    /// Ends a progress display.
    func endProgress() {
        state.withLock { $0.lastQuarter = -1 }
        clearLine()
    }

    /// Clears a drawn progress bar, so that a line can be written.
    private func clearLine() {
        let wasDrawing = state.withLock { state -> Bool in
            defer { state.drawing = false }
            return state.drawing
        }
        if wasDrawing { FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// Records whether a promise held.
    @discardableResult
    func check(_ condition: Bool, _ promise: String) -> Bool {
        if !condition { state.withLock { $0.failures.append(promise) } }
        if !quiet || !condition { write("   " + (condition ? "✔ " : "✘ ") + promise) }
        return condition
    }

    var failures: [String] { state.withLock { $0.failures } }

    /// Printed whatever `--quiet` says.
    func always(_ text: String) {
        write(text)
    }

    private func write(_ text: String) {
        clearLine()
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
