import Foundation
import Testing

/// Every Swift code block in README.md, ARCHITECTURE.md and Docs/*.md is compiled: it is marked
/// `<!-- snippet: NAME -->` on the line before its fence, and equals, once indentation is removed, the region
/// `// snippet: NAME` … `// end snippet` of a file in this target — which the build compiles. `Scripts/sync-snippets.py`
/// copies the compiled regions into the docs.
@Suite("Doc snippets: every Swift example in the docs is this target's compiled code")
struct DocSnippetSyncTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    struct Block: CustomStringConvertible {
        var file: String
        var line: Int
        var name: String?
        var text: String
        var description: String { "\(file):\(line)" }
    }

    /// The Swift code blocks of the docs.
    static func blocks() throws -> [Block] {
        var files = ["README.md", "ARCHITECTURE.md"]
        let docs = root.appendingPathComponent("Docs")
        files += try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
            .map { "Docs/\($0)" }
        var blocks: [Block] = []
        for file in files {
            let url = root.appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
            var index = 0
            while index < lines.count {
                let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
                guard trimmed == "```swift" else {
                    index += 1
                    continue
                }
                let start = index
                index += 1
                var body: [String] = []
                while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                    body.append(lines[index])
                    index += 1
                }
                let previous = lines[..<start].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
                let marker = previous.trimmingCharacters(in: .whitespaces)
                var name: String?
                if marker.hasPrefix("<!-- snippet:"), marker.hasSuffix("-->") {
                    name = String(marker.dropFirst("<!-- snippet:".count).dropLast("-->".count))
                        .trimmingCharacters(in: .whitespaces)
                }
                blocks.append(Block(file: file, line: start + 1, name: name, text: dedent(body)))
                index += 1
            }
        }
        return blocks
    }

    /// The compiled regions of this target's files, by name.
    static func regions() throws -> [String: String] {
        let folder = root.appendingPathComponent("Tests/DocSnippets")
        var regions: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift") {
            let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                .components(separatedBy: "\n")
            var name: String?
            var body: [String] = []
            for line in lines {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("// snippet:") {
                    name = String(trimmed.dropFirst("// snippet:".count)).trimmingCharacters(in: .whitespaces)
                    body = []
                } else if trimmed == "// end snippet", let current = name {
                    #expect(regions[current] == nil, "\(file): snippet \(current) is defined twice")
                    regions[current] = dedent(body)
                    name = nil
                } else if name != nil {
                    body.append(line)
                }
            }
        }
        return regions
    }

    static func dedent(_ lines: [String]) -> String {
        let indents = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }
        let common = indents.min() ?? 0
        return lines.map { $0.count >= common ? String($0.dropFirst(common)) : "" }.joined(separator: "\n")
    }

    @Test("Every Swift block is marked with the snippet it shows")
    func everyBlockIsMarked() throws {
        for block in try Self.blocks() where block.name == nil {
            Issue.record(
                "\(block): a Swift block with no `<!-- snippet: NAME -->` line before it; compile it in Tests/DocSnippets"
            )
        }
    }

    @Test("Every marked block equals its compiled region; every region is shown somewhere")
    func blocksEqualRegions() throws {
        let regions = try Self.regions()
        let blocks = try Self.blocks()
        for block in blocks {
            guard let name = block.name else { continue }
            guard let region = regions[name] else {
                Issue.record("\(block): snippet \(name) is not in Tests/DocSnippets")
                continue
            }
            #expect(
                block.text == region,
                "\(block): snippet \(name) differs from its compiled copy; run Scripts/sync-snippets.py")
        }
        let shown = Set(blocks.compactMap(\.name))
        for name in regions.keys.sorted() where !shown.contains(name) {
            Issue.record("snippet \(name) is compiled but no doc shows it")
        }
    }

    @Test("The check can fail: a block that differs from its region, and one with no marker, are caught")
    func checkCanFail() {
        #expect(Self.dedent(["    a", "      b"]) == "a\n  b")
        #expect(Self.dedent(["    a", "      b"]) != Self.dedent(["  a", "  b"]))
    }
}
