import Testing

/// Reports what a model-based test's run found, if anything: one issue with the problems, then the steps that led to
/// them (and `context`, such as a trace), and the same text on standard output, where a long run's log keeps it.
/// `propertyCheck` adds the seed that replays the sequence.
public func recordModelProblems(
    _ problems: [String], model: String, steps: [some CustomStringConvertible], context: String? = nil
) {
    guard !problems.isEmpty else { return }
    let report =
        problems.joined(separator: "\n") + "\n" + (context.map { $0 + "\n" } ?? "") + "steps:\n  "
        + steps.map(\.description).joined(separator: "\n  ")
    print("\(model): \(report)")
    Issue.record(Comment(rawValue: report))
}
