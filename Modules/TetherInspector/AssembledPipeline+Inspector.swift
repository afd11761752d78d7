public import Logging
public import PipelineKit

extension AssembledPipeline {
    /// An inspector watching every service of the pipeline, by the names `configuration.yaml` gives them, and its
    /// store (as `store`). Run it beside the pipeline's services; see ``Inspector``.
    ///
    /// - Throws: ``InspectorError`` for an address other than loopback without a token, a port out of range or an
    ///   empty token.
    public func inspector(
        port: Int = 0, host: String = "127.0.0.1", token: String? = nil,
        logger: Logger = Logger(label: "tether.inspector")
    ) throws(InspectorError) -> Inspector {
        let inspector = try Inspector(
            configuration: InspectorConfiguration(host: host, port: port, token: token), logger: logger)
        for named in services { inspector.watch(named.service, named: named.name) }
        inspector.watch(store, named: "store")
        return inspector
    }
}
