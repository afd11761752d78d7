public import Foundation
import Yams

/// Reads `configuration.yaml` into a ``PipelineConfiguration``: YAML with Yams, every `type:` resolved in its
/// ``PluginRegistry``, environment overrides applied, and every problem reported at once with its file, line,
/// column and key path — before anything is started.
///
/// ```swift
/// let loader = ConfigurationLoader(registry: .standard)
/// do {
///     let configuration = try loader.load(file: "configuration.yaml")
/// } catch {
///     print(error)        // configuration.yaml:7:11: services.demo.transport.type: unknown transport type 'curl'…
/// }
/// ```
///
/// Environment overrides replace values from the file: `TETHER_BASE_URL`,
/// `TETHER_<SERVICE>_BASE_URL`, `TETHER_STORE_PATH` and `TETHER_CACHE_PATH`.
public struct ConfigurationLoader: Sendable {
    /// The plugins `type:` names resolve to.
    package var registry: PluginRegistry
    /// The environment overrides are read from.
    package var environment: [String: String]
    /// Bounds on the document once its aliases are expanded.
    public var limits = YAMLLimits()

    /// Makes a loader.
    public init(registry: PluginRegistry = .core, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.registry = registry
        self.environment = environment
    }

    /// Loads the file at `path`; relative paths inside it are resolved against its folder.
    public func load(file path: String) throws(ConfigurationError) -> PipelineConfiguration {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigurationError(
                file: path,
                issues: [
                    .init(
                        kind: .unreadableFile, path: "",
                        message: "no configuration file at \(url.standardizedFileURL.path)")
                ])
        }
        guard !isDirectory.boolValue else {
            throw ConfigurationError(
                file: path,
                issues: [
                    .init(kind: .unreadableFile, path: "", message: "this is a folder, not a configuration file")
                ])
        }
        // Read as a stream, so that a pipe works (`--config <(make-config)`), and no further than the limit, so that
        // `/dev/zero` does not fill memory.
        var data = Data()
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 65_536), !chunk.isEmpty {
                data.append(chunk)
                guard data.count <= limits.maximumBytes else {
                    throw ConfigurationError(
                        file: path,
                        issues: [
                            .init(
                                kind: .limitExceeded, path: "",
                                message:
                                    "the file is larger than \(limits.maximumBytes) bytes; a configuration is a few KB")
                        ])
                }
            }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(
                file: path,
                issues: [
                    .init(kind: .unreadableFile, path: "", message: "cannot read the file: \(Self.reason(error))")
                ])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            let offset = Self.firstInvalidUTF8(in: data)
            let (line, column) = Self.position(ofByte: offset, in: data)
            throw ConfigurationError(
                file: path,
                issues: [
                    .init(
                        kind: .unreadableFile, path: "", line: line, column: column,
                        message: "the file is not UTF-8 text (byte \(offset) is not valid UTF-8)")
                ])
        }
        return try load(yaml: text, file: path, baseDirectory: url.deletingLastPathComponent())
    }

    /// Loads configuration from `yaml`; `file` names it in messages, and relative paths are resolved against
    /// `baseDirectory` (the current folder by default).
    public func load(yaml: String, file: String? = nil, baseDirectory: URL? = nil) throws(ConfigurationError)
        -> PipelineConfiguration
    {
        // Before anything is built: aliases may make the document billions of nodes, or thousands deep.
        if let issue = limits.violation(in: yaml) { throw ConfigurationError(file: file, issues: [issue]) }
        var root: Node
        do {
            root = try Yams.compose(yaml: yaml) ?? Node.mapping(Node.Mapping([]))
            // A document with nothing in it (`---` alone, `~`) is an empty configuration, like an empty file.
            if case .scalar(let scalar) = root, ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
                root = Node.mapping(Node.Mapping([]))
            }
        } catch {
            throw ConfigurationError(file: file, issues: [Self.syntaxIssue(error, in: yaml)])
        }
        let treeIssues = ComplexKeys.issues(in: root) + BaseSixtyNumbers.issues(in: root)
        if !treeIssues.isEmpty {
            throw ConfigurationError(
                file: file,
                issues: treeIssues.sorted { ($0.line ?? 0, $0.column ?? 0) < ($1.line ?? 0, $1.column ?? 0) })
        }
        let overrides = EnvironmentOverrides.apply(environment, to: &root)
        let log = IssueLog()
        var configuration: PipelineConfiguration?
        do {
            configuration = try YAMLDecoder().decode(
                PipelineConfiguration.self, from: root,
                userInfo: [.tetherIssueLog: log, .tetherPluginRegistry: registry])
        } catch let problem as ConfigurationProblem {
            if !log.entries.contains(where: { $0.path == problem.entry.path && $0.message == problem.entry.message }) {
                log.record(problem.entry)
            }
        } catch let error as DecodingError {
            log.record(
                SettingsContainer<PipelineConfiguration.CodingKeys>.entry(
                    for: error, at: ConfigurationPath(), expecting: PipelineConfiguration.self))
        } catch {
            log.record(.init(kind: .invalidValue, path: ConfigurationPath(), pointsAtKey: false, message: "\(error)"))
        }
        if var decoded = configuration {
            for entry in decoded.resolveDefaults(in: registry) { log.record(entry) }
            configuration = decoded
        }
        let entries = log.entries
        guard entries.isEmpty, var configuration else {
            let locator = NodeLocator(root: root, overrides: overrides)
            let end = TextEnd(yaml)
            let issues = entries.map { end.clamp(locator.issue(for: $0)) }
                .sorted { ($0.line ?? .max, $0.column ?? 0) < ($1.line ?? .max, $1.column ?? 0) }
            throw ConfigurationError(file: file, issues: issues)
        }
        configuration.file = file
        configuration.environment = environment
        configuration.locations = ConfigurationLocation.index(root)
        configuration.baseDirectory = baseDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return configuration
    }

    static func syntaxIssue(_ error: any Error, in yaml: String) -> ConfigurationError.Issue {
        SyntaxHint.annotate(TextEnd(yaml).clamp(describe(error)), in: yaml)
    }

    /// Where a text's last line ends, measured once for all of a file's issues (measuring per issue was quadratic:
    /// a fuzzer's find, a 4 KB file with hundreds of issues that took a third of a second).
    struct TextEnd {
        let lineCount: Int
        let lastLineLength: Int

        init(_ text: String) {
            let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            lineCount = lines.count
            lastLineLength = lines.last?.count ?? 0
        }

        /// libyaml marks the end of the stream on a line after the last: point at the last line's end instead (a
        /// fuzzer's find: "line 3" in a two-line file).
        func clamp(_ issue: ConfigurationError.Issue) -> ConfigurationError.Issue {
            guard let line = issue.line, line > lineCount, lineCount > 0 else { return issue }
            var issue = issue
            issue.line = lineCount
            issue.column = lastLineLength + 1
            issue.message += " (at the end of the file)"
            return issue
        }
    }

    private static func describe(_ error: any Error) -> ConfigurationError.Issue {
        guard let yamlError = error as? YamlError else {
            return .init(kind: .syntax, path: "", message: "the YAML does not parse: \(error)")
        }
        switch yamlError {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let during = context.map { " (\($0.text) at line \($0.mark.line))" } ?? ""
            return .init(
                kind: .syntax, path: "", line: mark.line, column: mark.column,
                message: "YAML syntax: \(problem)\(during)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return .init(
                kind: .syntax, path: "", line: context.mark.line, column: context.mark.column,
                message: "duplicate key \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) in one mapping")
        case .reader(let problem, let offset, let value, let yaml):
            // libyaml gives a byte offset, not a mark: a NUL or another control character, say.
            let character = value == 0 ? "NUL" : String(format: "U+%04X", value)
            let message = "the YAML cannot be read: \(problem) (\(character))"
            guard let offset else { return .init(kind: .syntax, path: "", message: message) }
            let (line, column) = position(ofByte: offset, in: Array(yaml.utf8))
            return .init(kind: .syntax, path: "", line: line, column: column, message: message)
        default:
            return .init(kind: .syntax, path: "", message: "the YAML does not parse: \(yamlError)")
        }
    }

    /// The 1-based line and column (in characters) of the byte at `offset` in UTF-8 `bytes`.
    static func position(ofByte offset: Int, in bytes: some Collection<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(max(offset, 0)) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1  // not a continuation byte: a new character
            }
        }
        return (line, column)
    }

    /// The offset of the first byte of `data` that does not start or continue a valid UTF-8 sequence.
    static func firstInvalidUTF8(in data: Data) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = data.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .error: return offset
            case .emptyInput: return offset
            }
        }
    }

    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return nsError.localizedDescription
    }
}
