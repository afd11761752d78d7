import Yams

/// YAML 1.1 reads `1:30` as a number in base 60 (90), and Yams computes such a number — for any scalar decoded as an
/// integer that contains `:` — without checking for overflow: `limit: 388888888888888888:8888888888888:8` crashed
/// the loader (a fuzzer's find). Every plain scalar Yams would read that way is checked first, and one that does
/// not fit in 64 bits is reported at its line instead.
enum BaseSixtyNumbers {
    /// One issue per plain scalar in `root` that Yams would compute in base 60 with an overflow, in document order.
    static func issues(in root: Node) -> [ConfigurationError.Issue] {
        var issues: [ConfigurationError.Issue] = []
        collect(root, into: &issues)
        return issues
    }

    private static func collect(_ node: Node, into issues: inout [ConfigurationError.Issue]) {
        switch node {
        case .mapping(let mapping):
            for (key, value) in mapping {
                collect(key, into: &issues)
                collect(value, into: &issues)
            }
        case .sequence(let sequence):
            for element in sequence { collect(element, into: &issues) }
        case .scalar(let scalar):
            guard scalar.style == .plain || scalar.style == .any, overflows(scalar.string) else { return }
            issues.append(
                .init(
                    kind: .invalidValue, path: "", line: scalar.mark?.line, column: scalar.mark?.column,
                    message:
                        "'\(scalar.string)' is too large a number: YAML reads a:b:c as base 60 — quote it if it is text"
                ))
        case .alias:
            break
        }
    }

    /// Whether Yams' base-60 reading of `text` (sign, then components separated by `:`, each a decimal integer)
    /// overflows 64 bits, as its `reduce` over the components would.
    static func overflows(_ text: String) -> Bool {
        guard text.contains(":") else { return false }
        var digits = text.filter { $0 != "_" }
        if digits.hasPrefix("-") || digits.hasPrefix("+") { digits.removeFirst() }
        let components = digits.split(separator: ":", omittingEmptySubsequences: false).map { Int64($0, radix: 10) }
        guard components.allSatisfy({ $0 != nil }) else { return false }  // not a number: Yams refuses it
        var base: Int64 = 1
        var value: Int64 = 0
        for digit in components.reversed() {
            let (product, productOverflow) = digit!.multipliedReportingOverflow(by: base)
            let (sum, sumOverflow) = value.addingReportingOverflow(product)
            let (nextBase, baseOverflow) = base.multipliedReportingOverflow(by: 60)
            if productOverflow || sumOverflow || baseOverflow { return true }
            (value, base) = (sum, nextBase)
        }
        return false
    }
}
