internal import CYaml

/// Bounds on a configuration's YAML once its aliases are expanded, measured from libyaml's events before Yams builds
/// anything — in time and memory proportional to the text, whatever it expands to.
///
/// An alias stands for the whole node its anchor names, so a few hundred bytes can stand for billions of nodes (a
/// "billion laughs"), and a chain of aliases (`a1: &a1 [*a0]`, `a2: &a2 [*a1]`, …) nests deeper than libyaml's own
/// depth limit, which counts only what is written, sees. Building the tree is cheap (an alias shares its anchor's
/// node) except where Yams compares mapping keys, and everything after — environment overrides, decoding — would
/// expand it. A real configuration has a few hundred nodes, nested under ten deep, and a few dozen keys in a mapping.
public struct YAMLLimits: Sendable, Hashable {
    /// The most nodes (keys, values and list elements, each alias counted as everything it stands for) the document
    /// may hold. 100,000 by default.
    public var maximumNodes: Int
    /// The deepest nesting of mappings and lists, aliases expanded. 64 by default.
    public var maximumDepth: Int
    /// The largest file ``ConfigurationLoader/load(file:)`` reads, in bytes. 4 MiB by default.
    public var maximumBytes: Int
    /// The most keys one mapping may hold. 256 by default. Decoding looks each key up in its mapping by a linear
    /// search (Yams' `Node.Mapping`), so a mapping's decoding time grows with the square of its keys: 256 decode in
    /// about a millisecond, 40,000 would take minutes. With ``maximumNodes``, the bound caps the whole load too.
    public var maximumKeysPerMapping: Int

    /// Makes limits; the defaults are far above any real configuration and far below harm.
    public init(
        maximumNodes: Int = 100_000, maximumDepth: Int = 64, maximumBytes: Int = 4 << 20,
        maximumKeysPerMapping: Int = 256
    ) {
        self.maximumNodes = maximumNodes
        self.maximumDepth = maximumDepth
        self.maximumBytes = maximumBytes
        self.maximumKeysPerMapping = maximumKeysPerMapping
    }

    /// The first limit `yaml` exceeds once expanded, as an issue at the line and column of the node (or alias) where it
    /// was exceeded, with its key path — or a key written twice in one mapping, at the second; nil when there is
    /// neither, or when the text does not parse (Yams then reports it with its own message).
    func violation(in yaml: String) -> ConfigurationError.Issue? {
        var text = yaml
        return text.withUTF8 { bytes in
            var scan = ExpansionScan(limits: self)
            return scan.run(bytes)
        }
    }
}

/// One pass over libyaml's events, counting what each node stands for.
private struct ExpansionScan {
    /// An open mapping or list.
    struct Frame {
        let isMapping: Bool
        let anchor: String?
        /// ``expanded`` when it opened: what it stands for is the difference when it closes.
        let expandedAtStart: Int
        /// The deepest nesting below it so far, counting itself as 1.
        var height = 1
        /// In a mapping: whether the next node is a key.
        var expectsKey = true
        /// In a mapping: the last scalar key; in a list: the index of the next element.
        var key: String?
        var index = 0
        /// In a mapping: the line each plain key was first written on.
        var keyLines: [String: Int] = [:]
        /// In a mapping: how many keys it holds so far.
        var keys = 0
    }

    /// What an anchor's node stands for.
    struct Measure {
        var nodes: Int
        var height: Int
    }

    let limits: YAMLLimits
    var frames: [Frame] = []
    var anchors: [String: Measure] = [:]
    /// The nodes counted so far, aliases expanded.
    var expanded = 0

    init(limits: YAMLLimits) {
        self.limits = limits
    }

    mutating func run(_ bytes: UnsafeBufferPointer<UInt8>) -> ConfigurationError.Issue? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count)
        var event = yaml_event_t()
        while yaml_parser_parse(&parser, &event) == 1 {
            defer { yaml_event_delete(&event) }
            let mark = (line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return nil
            case YAML_DOCUMENT_START_EVENT:
                frames.removeAll()
                expanded = 0
            case YAML_SCALAR_EVENT:
                let value = Self.string(event.data.scalar.value, length: event.data.scalar.length)
                if let issue = add(Measure(nodes: 1, height: 0), at: mark) { return issue }
                if let anchor = Self.string(event.data.scalar.anchor) { anchors[anchor] = Measure(nodes: 1, height: 0) }
                if let value, let issue = duplicate(value, at: mark) { return issue }
                noteKey(value)
            case YAML_ALIAS_EVENT:
                guard let name = Self.string(event.data.alias.anchor), let measure = anchors[name] else { return nil }
                if let issue = add(measure, at: mark) { return issue }
                noteKey(nil)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                let isMapping = event.type == YAML_MAPPING_START_EVENT
                let anchor = Self.string(isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor)
                if let issue = add(Measure(nodes: 1, height: 1), at: mark) { return issue }
                frames.append(Frame(isMapping: isMapping, anchor: anchor, expandedAtStart: expanded - 1))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let frame = frames.popLast() else { return nil }
                if let anchor = frame.anchor {
                    anchors[anchor] = Measure(nodes: expanded - frame.expandedAtStart, height: frame.height)
                }
                if !frames.isEmpty {
                    frames[frames.count - 1].height = max(frames[frames.count - 1].height, frame.height + 1)
                }
                noteKey(nil)
            default:
                break
            }
        }
        return nil  // a syntax error: Yams reports it
    }

    /// Counts a node standing for `measure` at the current place; the issue when that exceeds a limit.
    mutating func add(_ measure: Measure, at mark: (line: Int, column: Int)) -> ConfigurationError.Issue? {
        if let last = frames.indices.last, frames[last].isMapping, frames[last].expectsKey {
            frames[last].keys += 1
            if frames[last].keys > limits.maximumKeysPerMapping {
                return issue(
                    at: mark,
                    "the mapping holds more than \(limits.maximumKeysPerMapping) keys; a setting needs a few dozen at most"
                )
            }
        }
        expanded += measure.nodes
        if expanded > limits.maximumNodes {
            return issue(
                at: mark,
                "the document expands to more than \(limits.maximumNodes) nodes (an alias counts as everything it stands for)"
            )
        }
        if frames.count + measure.height > limits.maximumDepth {
            return issue(at: mark, "the document nests deeper than \(limits.maximumDepth) levels (aliases expanded)")
        }
        if !frames.isEmpty {
            frames[frames.count - 1].height = max(frames[frames.count - 1].height, measure.height + 1)
        }
        return nil
    }

    /// A scalar key written twice in one mapping, reported where it is written the second time (Yams reports the
    /// first); nil otherwise.
    mutating func duplicate(_ key: String, at mark: (line: Int, column: Int)) -> ConfigurationError.Issue? {
        guard let last = frames.indices.last, frames[last].isMapping, frames[last].expectsKey else { return nil }
        guard let first = frames[last].keyLines[key] else {
            frames[last].keyLines[key] = mark.line
            return nil
        }
        var issue = issue(at: mark, "duplicate key '\(key)' in one mapping (first at line \(first))")
        issue.kind = .syntax
        return issue
    }

    /// After a node in a mapping, records the key it was (a scalar's text) or that it was a value; in a list, counts it.
    mutating func noteKey(_ scalar: String?) {
        guard !frames.isEmpty else { return }
        let last = frames.count - 1
        if frames[last].isMapping {
            if frames[last].expectsKey { frames[last].key = scalar ?? "?" }
            frames[last].expectsKey.toggle()
        } else {
            frames[last].index += 1
        }
    }

    func issue(at mark: (line: Int, column: Int), _ message: String) -> ConfigurationError.Issue {
        var path = ConfigurationPath()
        for frame in frames {
            if frame.isMapping {
                if !frame.expectsKey, let key = frame.key { path = path.appending(key) }
            } else {
                path = ConfigurationPath(path.components + [.index(frame.index)])
            }
        }
        return .init(
            kind: .limitExceeded, path: path.description, line: mark.line, column: mark.column, message: message)
    }

    static func string(_ pointer: UnsafeMutablePointer<UInt8>?, length: Int? = nil) -> String? {
        guard let pointer else { return nil }
        if let length { return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self) }
        return String(cString: pointer)
    }
}
