import PersistenceKit

/// GRDB has a `PersistenceError` of its own (for records); inside this module the name means PersistenceKit's.
/// Public signatures spell it out as `PersistenceKit.PersistenceError`.
typealias PersistenceError = PersistenceKit.PersistenceError
