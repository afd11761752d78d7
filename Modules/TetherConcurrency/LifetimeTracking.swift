/// Lets a leak check see every long-lived Tether object as it is made: services, resources, stores, live queries,
/// document stores and caches report themselves here from their initializers.
///
/// The sink is a task-local value, so a check sees what its own task (and the tasks that inherit its locals) makes,
/// and tests running in parallel never see each other's objects. With no sink set — always, outside a leak check —
/// reporting costs one task-local lookup and builds no label.
package enum LifetimeTracking {
    /// What is told of each object made while it is set: the object and a label naming it.
    @TaskLocal package static var sink: (@Sendable (AnyObject, String) -> Void)?

    /// Reports `object`, just made, to the current sink, if there is one.
    @inlinable
    package static func made(_ object: AnyObject, _ label: @autoclosure () -> String) {
        guard let sink else { return }
        sink(object, label())
    }
}
