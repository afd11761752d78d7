import TransportKit

/// The role of one step of a response pipeline: turns a successful response's entity into another, or throws.
///
/// Throw any error with a helpful description: the load fails with a ``ResourceError`` of kind
/// ``ResourceError/Kind-swift.struct/transformFailed(_:)`` that names the stage and carries the error as its cause,
/// and the resource keeps its last valid data.
public protocol ResponseTransformer: Sendable {
    /// Transforms `entity`, typically its ``Entity/content``.
    func transform(_ entity: Entity) throws -> Entity
}

/// Why a transformer could not work.
public struct TransformError: Error, Sendable, CustomStringConvertible {
    /// The account of what was wrong.
    public var description: String

    /// Makes an error with an account of what was wrong.
    public init(_ description: String) {
        self.description = description
    }
}

/// A transformer from a closure with typed input and output: the content must be an `Input` (or the load fails,
/// naming both types); the closure's result replaces it, and nil is a failure too.
public struct ContentTransformer<Input: Sendable, Output: Sendable>: ResponseTransformer {
    let body: @Sendable (Input, Entity) throws -> Output?

    /// Makes a transformer from `body`, which gets the content and the whole entity.
    public init(_ body: @escaping @Sendable (Input, Entity) throws -> Output?) {
        self.body = body
    }

    /// Applies the closure to the content.
    public func transform(_ entity: Entity) throws -> Entity {
        guard let input = entity.content as? Input else {
            throw TransformError(
                "expected content of type \(Input.self), got \(type(of: entity.content)) (\(entity.mimeType))")
        }
        guard let output = try body(input, entity) else {
            throw TransformError("the transformer from \(Input.self) to \(Output.self) returned nil")
        }
        var entity = entity
        entity.content = output
        return entity
    }
}
