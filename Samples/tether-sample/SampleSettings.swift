import PipelineKit

/// The sample's own section of `configuration.yaml` (`sample:`): the sizes of its scenarios and how the embedded
/// demo server misbehaves. Registered with the pipeline's registry, so its keys are checked like every other.
struct SampleSettings: Decodable, Sendable {
    /// The service the scenarios use.
    var service = "demo"
    /// The live query the back-pressure scenario observes.
    var liveQuery = "abc-items"
    /// Ownership: how many screens open.
    var screens = 12
    /// Ownership: how many item details each screen reads without observing.
    var detailsPerScreen = 4
    /// Back pressure: how many documents the collection holds.
    var documents = 1500
    /// Back pressure: how many commits the fast writer makes.
    var writes = 6000
    /// Back pressure: how long the slow consumer takes per delivery.
    var consumerDelay = Duration.milliseconds(10)
    /// Back pressure: how often memory is sampled.
    var sampleInterval = Duration.milliseconds(20)
    /// The embedded server's misbehaviour.
    var server = ServerSettings()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case service, liveQuery = "live_query", screens, detailsPerScreen = "details_per_screen", documents, writes
        case consumerDelay = "consumer_delay", sampleInterval = "sample_interval", server
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        service = try settings.decode(.service, default: service)
        liveQuery = try settings.decode(.liveQuery, default: liveQuery)
        screens = try settings.decode(.screens, default: screens, where: { $0 >= 2 }, "must be at least 2 (half of them close)")
        detailsPerScreen = try settings.decode(.detailsPerScreen, default: detailsPerScreen, where: { $0 >= 0 }, "must be zero or more")
        documents = try settings.decode(.documents, default: documents, where: { $0 >= 3 }, "must be at least 3")
        writes = try settings.decode(.writes, default: writes, where: { $0 >= 1 }, "must be at least 1")
        consumerDelay = try settings.duration(.consumerDelay, default: consumerDelay, allowsZero: true)
        sampleInterval = try settings.duration(.sampleInterval, default: sampleInterval)
        server = try settings.decode(.server, default: server)
    }
}

/// How the embedded demo server misbehaves (`sample.server:`): deterministically, by request count.
struct ServerSettings: Decodable, Sendable {
    /// Every n-th request is slow (0: never).
    var slowEvery = 7
    /// How slow.
    var slowDelay = Duration.milliseconds(150)
    /// Every n-th request fails with 503 (0: never); the service's retry policy sends it again.
    var failEvery = 11

    enum CodingKeys: String, CodingKey, CaseIterable {
        case slowEvery = "slow_every", slowDelay = "slow_delay", failEvery = "fail_every"
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        slowEvery = try settings.decode(.slowEvery, default: slowEvery, where: { $0 >= 0 }, "must be zero (never) or more")
        slowDelay = try settings.duration(.slowDelay, default: slowDelay, allowsZero: true)
        failEvery = try settings.decode(.failEvery, default: failEvery, where: { $0 >= 0 }, "must be zero (never) or more")
    }
}
