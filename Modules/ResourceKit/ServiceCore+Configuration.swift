import Logging
import Synchronization
import TetherConcurrency
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServiceCore {
    /// Adds a configuration rule: `configurer` changes the configuration of every resource matching `pattern`, for
    /// requests with one of `requestMethods` (all methods when nil). Rules apply in the order they were added, after
    /// the defaults and the standard transformers; resources pick up the change at their next request.
    ///
    /// ```swift
    /// service.configure { $0.headers["Authorization"] = "Bearer \(token)" }
    /// service.configure("/items/**", requestMethods: [.get]) { $0.expirationTime = .seconds(300) }
    /// ```
    ///
    /// `configurer` runs when a resource first needs its configuration after a change, on that resource's calling
    /// thread: keep it to changing the configuration.
    func configure(
        _ pattern: ConfigurationPattern = .all, requestMethods: [HTTPMethod]? = nil, description: String? = nil,
        _ configurer: @escaping @Sendable (inout ResourceConfiguration) -> Void
    ) {
        let rule = ConfigurationRule(
            pattern: pattern.compiled(base: base), methods: requestMethods.map(Set.init),
            description: description ?? "\(pattern)", configurer: configurer)
        rules.withLock { $0.append(rule) }
        invalidateConfiguration()
        logging.configuration.debug("configuration rule added", metadata: ["rule": "\(rule.description)"])
    }

    /// Adds a transformer from a closure at `stage` for resources matching `pattern`: the content must be an
    /// `Input`, the closure's result becomes the content. By default it replaces the stage's other transformers.
    ///
    /// ```swift
    /// service.configureTransformer("/greeting") { (text: String, _) in text.uppercased() }
    /// ```
    func configureTransformer<Input: Sendable, Output: Sendable>(
        _ pattern: ConfigurationPattern = .all, requestMethods: [HTTPMethod]? = nil,
        atStage stage: PipelineStageKey = .model, replacingExisting: Bool = true, contentTypes: [String] = ["*/*"],
        description: String? = nil, _ transform: @escaping @Sendable (Input, Entity) throws -> Output?
    ) {
        configure(
            pattern, requestMethods: requestMethods,
            description: description ?? "\(Input.self) → \(Output.self) at \(stage) for \(pattern)"
        ) {
            if replacingExisting { $0.pipeline[stage].removeTransformers() }
            $0.pipeline[stage].add(ContentTransformer(transform), contentTypes: contentTypes)
        }
    }

    /// Decodes the JSON bodies of resources matching `pattern` to `Model` at the model stage (see
    /// ``DecodableTransformer``), replacing the stage's other transformers.
    ///
    /// ```swift
    /// service.configureModel(User.self, for: "/users/*")
    /// let user: User? = service.resource("/users/1").typedContent()
    /// ```
    func configureModel<Model: Decodable & Sendable>(
        _ type: Model.Type, for pattern: ConfigurationPattern = .all, requestMethods: [HTTPMethod]? = nil,
        contentTypes: [String] = ["application/json", "*/*+json"],
        decoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) {
        configure(pattern, requestMethods: requestMethods, description: "\(Model.self) model for \(pattern)") {
            $0.pipeline[.model].removeTransformers()
            $0.pipeline[.model].add(DecodableTransformer<Model>(decoder: decoder), contentTypes: contentTypes)
        }
    }

    /// Makes every resource recompute its configuration at its next request: call it when something a configurer
    /// reads has changed (a token, say).
    func invalidateConfiguration() {
        configurationGeneration.add(1, ordering: .releasing)
    }

    /// The configuration for `method` requests to `url`: the defaults, then every matching rule in order.
    func computeConfiguration(for url: URL?, method: HTTPMethod) -> ResourceConfiguration {
        let rules = rules.withLock { $0 }
        var configuration = ResourceConfiguration()
        let withoutQuery = url.map(ResourceAddress.withoutQuery)
        for rule in rules {
            if let url, let withoutQuery {
                guard rule.applies(to: url, withoutQuery: withoutQuery, method: method) else { continue }
            } else {
                guard case .all = rule.pattern, rule.methods?.contains(method) ?? true else { continue }
            }
            rule.configurer(&configuration)
        }
        return configuration
    }
}
