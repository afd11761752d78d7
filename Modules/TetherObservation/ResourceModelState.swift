import Foundation
import ResourceKit

// A ResourceModel's state and the rules for what an event changes, apart from its generic class: types nested in a
// generic class are generic too, and code over them looks their metadata up at run time, per event.

/// What a `ResourceModel` holds.
struct ResourceModelState: Sendable {
    var resource: Resource?
    var shown = ResourceModelSnapshot()
    /// Whether the first read of the content loads the resource, and whether that read has happened for this one.
    var loadsOnAccess: Bool
    var loadRequested = false
}

/// A resource's state as a model shows it.
struct ResourceModelSnapshot: Sendable {
    /// The content, of the model's `Content` type (nil when the resource's is of another).
    var content: (any Sendable)?
    var isLoading = false
    var error: ResourceError?
    var timestamp: Date?
    var isUpToDate = false
}

/// Which properties an update changes.
struct ResourceModelChanges {
    var content, isLoading, error, timestamp, isUpToDate: Bool

    /// Each property changes when its value does; the error also when a load failed again. The content changes at
    /// new data, even equal data (contents cannot be compared in general), and at the observer's first call when
    /// either side has content.
    init(from shown: ResourceModelSnapshot, to snapshot: ResourceModelSnapshot, event: ResourceEvent?) {
        let newContent: Bool
        switch event {
        case .newData?, .observerAdded?, nil: newContent = true
        default: newContent = false
        }
        content = newContent && (shown.content != nil || snapshot.content != nil)
        isLoading = shown.isLoading != snapshot.isLoading
        error = (shown.error == nil) != (snapshot.error == nil) || event == .error
        timestamp = shown.timestamp != snapshot.timestamp
        isUpToDate = shown.isUpToDate != snapshot.isUpToDate
    }
}
