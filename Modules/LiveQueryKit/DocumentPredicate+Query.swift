public import DocumentStoreKit
public import TetherJSON

extension DocumentPredicate {
    /// Compiles query text (the language of `find(_:args:)`) with `args` bound, without a store: to check a query
    /// ahead of time, as configuration loading does. A mistake throws a ``QueryError`` naming the column.
    ///
    /// ```swift
    /// let predicate = try DocumentPredicate(query: "store_id == $args.sid && qty > 0", args: ["sid": "abc123"])
    /// ```
    public init(query: String, args: [String: JSONValue] = [:]) throws(QueryError) {
        self = try QueryParser.predicate(query, args: args)
    }
}
