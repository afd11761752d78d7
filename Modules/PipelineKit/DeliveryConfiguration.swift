/// How observers receive what they observe, by default (`delivery:`). Each live query may override it.
///
/// ```yaml
/// delivery:
///   default: { type: next-signal }            # live queries
///   resources: { type: deliver-on-queue }     # resource observers (default: as `default`)
/// ```
package struct DeliveryConfiguration: Decodable, Sendable {
    /// The default for live queries (and for resources, unless ``resources`` is given); nil for the registry's.
    package var `default`: PluginChoice<ObservationDelivery>?
    /// The default for resource observers; nil for ``default``.
    package var resources: PluginChoice<ObservationDelivery>?

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case `default`, resources
    }

    /// The registry's defaults.
    package init(default: PluginChoice<ObservationDelivery>? = nil, resources: PluginChoice<ObservationDelivery>? = nil)
    {
        self.default = `default`
        self.resources = resources
    }

    /// Decodes the settings.
    package init(from decoder: any Decoder) throws {
        self.init()
        let settings = try decoder.settings(CodingKeys.self)
        self.default = try settings.decode(.default, as: PluginChoice<ObservationDelivery>.self)
        resources = try settings.decode(.resources, as: PluginChoice<ObservationDelivery>.self)
    }
}
