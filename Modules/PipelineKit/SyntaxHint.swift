import Foundation

/// Says in plain words what libyaml's messages about layout mean: a tab where YAML allows only spaces, or a line
/// indented differently from the lines around it ("did not find expected key" names neither).
enum SyntaxHint {
    static func annotate(_ issue: ConfigurationError.Issue, in yaml: String) -> ConfigurationError.Issue {
        guard issue.kind == .syntax, let number = issue.line, number >= 1 else { return issue }
        let lines = yaml.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        guard number <= lines.count else { return issue }
        var issue = issue
        // The line libyaml names, or the one before it (a tab is often reported where the next token begins).
        for candidate in [number, number - 1] where candidate >= 1 {
            let line = lines[candidate - 1]
            if let tab = line.prefix(while: { $0 == " " || $0 == "\t" }).firstIndex(of: "\t") {
                let column = line.distance(from: line.startIndex, to: tab) + 1
                issue.message +=
                    "; line \(candidate) is indented with a tab (column \(column)): YAML indents with spaces only"
                return issue
            }
        }
        let layoutProblems = [
            "did not find expected key", "mapping values are not allowed", "did not find expected '-' indicator",
            "did not find expected <document start>",
        ]
        guard layoutProblems.contains(where: { issue.message.contains($0) }) else { return issue }
        func indent(_ line: Substring) -> Int { line.prefix { $0 == " " }.count }
        let here = lines[number - 1]
        let previous = lines[..<(number - 1)].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        if let previous, !here.trimmingCharacters(in: .whitespaces).isEmpty {
            issue.message +=
                "; check the indentation: line \(number) is indented \(indent(here)) spaces, "
                + "the line before it \(indent(previous)) (keys of one mapping line up exactly)"
        } else {
            issue.message += "; check the indentation around line \(number)"
        }
        return issue
    }
}
