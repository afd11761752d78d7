/// A weak reference to any object, with the identity it had when it was made.
///
/// A class, so that copying an entry that holds it is a retain, not a weak-reference copy.
///
/// Owners can be any object, `Sendable` or not; the table never calls them, it only asks whether they are
/// still alive and who they are. The reference is immutable (`weak let`), and the Swift runtime makes loading
/// a weak reference safe from any thread, which is what makes this tiny box `@unchecked Sendable`.
@usableFromInline
package final class WeakReference: @unchecked Sendable {
    /// The object, or `nil` once it has been deallocated.
    @usableFromInline package weak let object: AnyObject?
    /// The object's identity. Only meaningful while the object is alive (addresses are reused).
    @usableFromInline package let id: ObjectIdentifier
    /// The object's class, kept for inspection (an inspector names owners, also once they are gone).
    @usableFromInline package let type: any AnyObject.Type

    @inlinable
    package init(_ object: AnyObject) {
        self.object = object
        self.id = ObjectIdentifier(object)
        self.type = Swift.type(of: object)
    }

    /// A reference to `object` that an inspector names `type`: for an object that stands in for another, such as
    /// the lifeline that owns a token's observation in the token's place.
    @inlinable
    package init(_ object: AnyObject, standingFor type: any AnyObject.Type) {
        self.object = object
        self.id = ObjectIdentifier(object)
        self.type = type
    }

    /// True when this refers to `candidate`, which the caller keeps alive.
    ///
    /// Compares identities first and loads the weak reference only on a match, so the strong reference the
    /// load creates is to `candidate` itself and can never be the last one (no `deinit` runs here).
    @inlinable
    package func refers(to candidate: AnyObject) -> Bool {
        id == ObjectIdentifier(candidate) && object != nil
    }
}
