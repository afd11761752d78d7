import NIOSSL
import PostgresNIO

/// A `PostgresConfiguration` as postgres-nio's configurations: the pool's (`PostgresClient`) and a single
/// connection's (the listener's, the entity cache's), with the TLS mode applied the same way to both.
enum PostgresConnectionConfigurations {
    /// The pool's configuration.
    static func client(_ configuration: PostgresConfiguration) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch configuration.tls {
            case .disable: .disable
            case .require: .require(unverifiedTLS)
            case .verifyFull: .require(.makeClientConfiguration())
            }
        var client = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.user,
            password: configuration.password, database: configuration.database, tls: tls)
        client.options.connectTimeout = configuration.connectTimeout
        client.options.maximumConnections = configuration.poolSize
        client.options.minimumConnections = 1
        return client
    }

    /// A single connection's configuration.
    ///
    /// - Throws: what NIOSSL throws when the system's TLS setup cannot be loaded.
    static func connection(_ configuration: PostgresConfiguration) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch configuration.tls {
            case .disable: .disable
            case .require: .require(try NIOSSLContext(configuration: unverifiedTLS))
            case .verifyFull: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var connection = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.user,
            password: configuration.password, database: configuration.database, tls: tls)
        connection.options.connectTimeout = TimeAmount(configuration.connectTimeout)
        return connection
    }

    /// TLS that encrypts but does not check the server's certificate (`sslmode=require`).
    static var unverifiedTLS: TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        return tls
    }
}
