// DeliveryKit's types are part of LiveQueryKit's API (`SignalNext`, a query's `DeliveryStatistics`): re-exported so
// that `import LiveQueryKit` is enough to name them, as `import ResourceKit` brings in `JSONValue`.
@_exported public import DeliveryKit
