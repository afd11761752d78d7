#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a mutation expects the resource's content to become, shown to its observers at once (see
/// ``Resource/mutate(_:body:contentType:headers:optimistic:onSuccess:invalidates:durable:)``).
///
/// An update is a layer over the resource's confirmed data — what the server, the persistent cache or a local
/// override last gave. The layers of pending mutations apply in the order the mutations began, and apply again
/// whenever the data beneath them changes: a failed mutation's layer is taken out and the others stay, over the
/// newest confirmed data, as Apollo keeps its optimistic layers.
///
/// ```swift
/// resource.mutate(.put, json: item, optimistic: .replacing(with: item))
/// list.mutate(.post, json: draft, optimistic: .updating { (items: [Item]?) in (items ?? []) + [draft] })
/// ```
///
/// An update may run more than once, on any thread, and never under the resource's lock: make it a pure function
/// of the content it is given.
///
/// A durable mutation's update must survive a restart, and a function cannot be stored: give it ``named(_:)``, an
/// update defined on the service from the mutation's body, or ``removing``.
public struct OptimisticUpdate: Sendable {
    /// Makes the content a layer shows from the entity beneath it (nil: none), given when its mutation began.
    typealias Apply = @Sendable (_ beneath: Entity?, _ began: Date) -> Entity?

    private enum Form: Sendable {
        case function(Apply)
        case named(String)
    }

    private let form: Form
    /// What an outbox stores for it; nil for a function, which cannot be stored.
    let storedName: String?

    private init(_ apply: @escaping Apply, storedName: String? = nil) {
        form = .function(apply)
        self.storedName = storedName
    }

    /// The name an outbox stores for ``removing``.
    static let removingName = "@removing"

    /// The update `service.defineOptimisticUpdate(name) { body in … }` makes from the mutation's body. An update
    /// that survives a restart: a durable mutation stores its name, and shows the layer again when resumed.
    ///
    /// ```swift
    /// service.defineOptimisticUpdate("append-item") { body in
    ///     let item = try JSONDecoder().decode(Item.self, from: body ?? Data())
    ///     return .updating { (items: [Item]?) in (items ?? []) + [item] }
    /// }
    /// list.mutate(.post, json: item, optimistic: .named("append-item"), durable: true)
    /// ```
    ///
    /// A name no update is defined as, or a definition that throws for the body, fails the mutation at once.
    public static func named(_ name: String) -> OptimisticUpdate {
        OptimisticUpdate(form: .named(name), storedName: name)
    }

    private init(form: Form, storedName: String?) {
        self.form = form
        self.storedName = storedName
    }

    /// The function this update applies: its own, or the one `definitions` make of `body` for its name.
    func resolved(body: Data?, definitions: DurableMutations) throws(ResolutionFailure) -> Apply {
        switch form {
        case .function(let apply):
            return apply
        case .named(let name):
            let update: OptimisticUpdate?
            do {
                update = try definitions.definedUpdate(name, body: body)
            } catch {
                throw ResolutionFailure(
                    message: "the optimistic update \"\(name)\" cannot be made from the body: \(error)")
            }
            guard let update, case .function(let apply) = update.form else {
                throw ResolutionFailure(
                    message:
                        "no optimistic update is defined as \"\(name)\" (Service.defineOptimisticUpdate), or it is defined as another name"
                )
            }
            return apply
        }
    }

    /// Why an update could not be resolved.
    struct ResolutionFailure: Error {
        let message: String
    }

    /// The content becomes `content`. The headers (an `ETag` among them) and the timestamp stay those of the data
    /// beneath; with no data beneath, the entity is timestamped when the mutation began.
    public static func replacing(with content: some Sendable) -> OptimisticUpdate {
        OptimisticUpdate { beneath, began in
            var entity = beneath ?? Entity(content: content, timestamp: began)
            entity.content = content
            return entity
        }
    }

    /// The content becomes what `transform` makes of it: the content beneath as `Content`, or nil when there is
    /// none or it is something else (see ``Entity/typedContent(as:)``). Headers and timestamp as in
    /// ``replacing(with:)``.
    public static func updating<Content: Sendable>(
        _ transform: @escaping @Sendable (Content?) -> Content
    ) -> OptimisticUpdate {
        OptimisticUpdate { beneath, began in
            let content = transform(beneath?.typedContent(as: Content.self))
            var entity = beneath ?? Entity(content: content, timestamp: began)
            entity.content = content
            return entity
        }
    }

    /// The resource shows no data, as after a `DELETE` the server has not yet answered.
    public static var removing: OptimisticUpdate {
        OptimisticUpdate({ _, _ in nil }, storedName: removingName)
    }
}

/// What a mutation does with the resource once the server has accepted it.
public enum MutationSuccess: Sendable, Hashable {
    /// The resource loads again, and the mutation's optimistic layer stays until that load ends, so that observers
    /// never see the content as it was before the mutation. Right when the response is not the resource's
    /// representation — a `POST` to a list answers with the new item.
    case reload
    /// The response's data, through the resource's pipeline for the mutation's method, becomes the resource's data
    /// in the same step that takes its optimistic layer away — right for a `PUT` or `PATCH` that answers with the
    /// resource as stored. A response without a body (`204 No Content`) makes the resource load again, as
    /// ``reload`` does.
    case useResponse
}
