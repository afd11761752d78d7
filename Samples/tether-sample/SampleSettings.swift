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
    /// Back pressure: how many documents the collection holds (a third of them match the live query).
    var documents = 1500
    /// Back pressure: the size of each document's `notes` text, so that a result is as big as a real screen's list.
    var documentSize = 384
    /// Back pressure: how many results the naive observer is offered per run. The writer's commit count is sized
    /// from it at start-up, from the rate this machine delivers results at.
    var arrivals = 100
    /// Back pressure: the slow consumer takes this many times the interval at which results arrive (measured at
    /// start-up), so that it is slower than the results on any machine. Well below 1 (0.01) the consumer keeps up, the
    /// naive pattern shows nothing, and the sample fails its contrast check — as it should.
    var consumerSlowdown = 3.0
    /// Back pressure: how often memory is sampled.
    var sampleInterval = Duration.milliseconds(20)
    /// Mutations: how many screens change a basket while the API is down.
    var mutationScreens = 4
    /// Mutations: how many changes each of them makes.
    var mutationsPerScreen = 6
    /// Mirrors: the mirrors (of `mirrors:`) the scenario starts. The demo API changes the first one's catalog; the
    /// others share its collection under scopes of their own. None (the default): the scenario does not run.
    var mirrors: [String] = []
    /// Mirrors: the live query over the first mirror's documents that a screen shows.
    var mirrorLiveQuery = "cheap-abc-catalog"
    /// Mirrors: how many times the demo API changes the catalog, one refresh after each.
    var mirrorRounds = 6
    /// Mirrors: how many changes and refreshes come while the screen is busy with one result.
    var mirrorBurst = 8
    /// The embedded server's misbehaviour.
    var server = ServerSettings()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case service
        case liveQuery = "live_query"
        case screens
        case detailsPerScreen = "details_per_screen"
        case documents
        case documentSize = "document_size"
        case arrivals
        case consumerSlowdown = "consumer_slowdown"
        case sampleInterval = "sample_interval"
        case mutationScreens = "mutation_screens"
        case mutationsPerScreen = "mutations_per_screen"
        case mirrors
        case mirrorLiveQuery = "mirror_live_query"
        case mirrorRounds = "mirror_rounds"
        case mirrorBurst = "mirror_burst"
        case server
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        service = try settings.decode(.service, default: service)
        liveQuery = try settings.decode(.liveQuery, default: liveQuery)
        screens = try settings.decode(
            .screens, default: screens, where: { $0 >= 2 }, "must be at least 2 (half of them close)")
        detailsPerScreen = try settings.decode(
            .detailsPerScreen, default: detailsPerScreen, where: { $0 >= 0 }, "must be zero or more")
        documents = try settings.decode(.documents, default: documents, where: { $0 >= 3 }, "must be at least 3")
        if let size = try settings.decode(.documentSize, as: ByteCountSetting.self)?.bytes {
            if (0...1_048_576).contains(size) {
                documentSize = size
            } else {
                try settings.invalid(.documentSize, "must be between 0 and 1MiB (found \(size) bytes)")
            }
        }
        arrivals = try settings.decode(.arrivals, default: arrivals, where: { $0 >= 10 }, "must be at least 10")
        consumerSlowdown = try settings.decode(
            .consumerSlowdown, default: consumerSlowdown, where: { $0 > 0 && $0 <= 100 },
            "must be more than 0 and at most 100")
        sampleInterval = try settings.duration(.sampleInterval, default: sampleInterval)
        mutationScreens = try settings.decode(
            .mutationScreens, default: mutationScreens, where: { (1...100).contains($0) }, "must be between 1 and 100")
        mutationsPerScreen = try settings.decode(
            .mutationsPerScreen, default: mutationsPerScreen, where: { (2...1_000).contains($0) },
            "must be between 2 and 1000")
        mirrors = try settings.decode(.mirrors, default: mirrors)
        mirrorLiveQuery = try settings.decode(.mirrorLiveQuery, default: mirrorLiveQuery)
        mirrorRounds = try settings.decode(
            .mirrorRounds, default: mirrorRounds, where: { (4...1_000).contains($0) }, "must be between 4 and 1000")
        mirrorBurst = try settings.decode(
            .mirrorBurst, default: mirrorBurst, where: { (2...1_000).contains($0) }, "must be between 2 and 1000")
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
        case slowEvery = "slow_every"
        case slowDelay = "slow_delay"
        case failEvery = "fail_every"
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        slowEvery = try settings.decode(
            .slowEvery, default: slowEvery, where: { $0 >= 0 }, "must be zero (never) or more")
        slowDelay = try settings.duration(.slowDelay, default: slowDelay, allowsZero: true)
        failEvery = try settings.decode(
            .failEvery, default: failEvery, where: { $0 >= 0 }, "must be zero (never) or more")
    }
}
