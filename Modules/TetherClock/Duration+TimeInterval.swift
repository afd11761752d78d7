#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

extension Duration {
    /// The duration in seconds, as a `TimeInterval`: for Foundation's and SQLite's APIs, which count in seconds.
    /// Tether's own, not the standard library's: `package`, so that users of Tether do not see it.
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
