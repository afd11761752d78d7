/// Everything wrong with a configuration, found before anything started: one ``Issue`` per problem, each saying
/// where it is (file, line, column, key path) and what would be right.
///
/// ```text
/// configuration.yaml:7:13: services.demo.transport.type: unknown transport type 'curl'; known types: async-http-client, in-memory, urlsession
/// configuration.yaml:12:5: services.demo.resources[0].expirty: unknown key; did you mean 'expiry'?
/// ```
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// One problem.
    public struct Issue: Sendable, Hashable, CustomStringConvertible {
        /// What kind of problem it is.
        public struct Kind: Sendable, Hashable, CustomStringConvertible {
            // A struct over a private enum, not a public enum: a kind added later breaks no user's exhaustive
            // `switch` (compare with `==`, or switch with a `default:`).
            private enum Value: String, Sendable, Hashable, CaseIterable {
                case syntax, unknownKey, unknownType, wrongType, invalidValue, missingKey, unreadableFile,
                    assemblyFailed, limitExceeded
            }

            private let value: Value

            private init(_ value: Value) {
                self.value = value
            }

            /// The YAML itself does not parse.
            public static var syntax: Self { Self(.syntax) }
            /// A key that nothing reads (a typo, most likely).
            public static var unknownKey: Self { Self(.unknownKey) }
            /// A `type:` that no plugin of that role is registered under.
            public static var unknownType: Self { Self(.unknownType) }
            /// A value of the wrong type (text where a number belongs, a list where a mapping does).
            public static var wrongType: Self { Self(.wrongType) }
            /// A value of the right type but outside what is allowed (a negative timeout, a zero limit, a bad URL).
            public static var invalidValue: Self { Self(.invalidValue) }
            /// A key that must be present is not.
            public static var missingKey: Self { Self(.missingKey) }
            /// The configuration file does not exist or cannot be read.
            public static var unreadableFile: Self { Self(.unreadableFile) }
            /// A part could not be made from valid settings (a database that would not open, say).
            public static var assemblyFailed: Self { Self(.assemblyFailed) }
            /// The document exceeds a bound that keeps loading it safe (see ``YAMLLimits``): too many nodes or too
            /// deep once its aliases are expanded.
            public static var limitExceeded: Self { Self(.limitExceeded) }

            /// The kind's name, as logs and messages show it: "syntax".
            public var name: String { value.rawValue }

            /// ``name``.
            public var description: String { name }

            /// Every kind this version knows, for tests and tables.
            package static var allCases: [Self] { Value.allCases.map(Self.init) }
        }

        /// What kind of problem it is.
        public var kind: Kind
        /// The key path, as in `services.demo.resources[1].expiry`; empty for the whole document.
        public var path: String
        /// The line (from 1), when known.
        public var line: Int?
        /// The column (from 1), when known.
        public var column: Int?
        /// The environment variable the value came from, when it did not come from the file.
        public var environmentVariable: String?
        /// What is wrong, and what would be right.
        public var message: String

        /// Makes an issue.
        package init(
            kind: Kind, path: String, line: Int? = nil, column: Int? = nil, environmentVariable: String? = nil,
            message: String
        ) {
            self.kind = kind
            self.path = path
            self.line = line
            self.column = column
            self.environmentVariable = environmentVariable
            self.message = message
        }

        /// `line:column: path: message`, and the variable if the value came from the environment.
        public var description: String {
            var text = ""
            if let line { text += "\(line):" + (column.map { "\($0):" } ?? "") + " " }
            if !path.isEmpty { text += path + ": " }
            text += message
            if let environmentVariable { text += " (set by environment variable \(environmentVariable))" }
            return text
        }
    }

    /// The file the configuration came from, if it came from a file.
    public var file: String?
    /// The problems, in the order they appear in the file.
    public var issues: [Issue]

    /// Makes an error.
    package init(file: String?, issues: [Issue]) {
        self.file = file
        self.issues = issues
    }

    /// One line per issue, each starting with the file, as compilers print them.
    public var description: String {
        let prefix = file.map { $0 + ":" } ?? ""
        return issues.map { issue in
            issue.line == nil && prefix.isEmpty
                ? issue.description : prefix + (issue.line == nil ? " " : "") + issue.description
        }.joined(separator: "\n")
    }
}
