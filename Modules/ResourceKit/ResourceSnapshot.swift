package import Foundation
import TetherClock
import TetherConcurrency
import TransportKit

/// What an observer shows of a resource — its data, error, whether it is loading and whether it is up to date — read
/// under one turn of its lock, so that the parts agree and reading them costs one lock, not four.
package struct ResourceSnapshot: Sendable {
    /// ``Resource/latestData``.
    package var data: Entity?
    /// ``Resource/latestError``.
    package var error: ResourceError?
    /// ``Resource/isLoading``.
    package var isLoading: Bool
    /// ``Resource/isUpToDate``.
    package var isUpToDate: Bool

    /// ``Resource/timestamp``: the newer of the data's and the error's.
    package var timestamp: Date? {
        switch (data?.timestamp, error?.timestamp) {
        case (let data?, let error?): max(data, error)
        case (let data, let error): data ?? error
        }
    }
}

extension Resource {
    /// The resource's state, read at once (see ``ResourceSnapshot``). Like ``latestData``, the first read starts the
    /// persistent-cache check.
    package var snapshot: ResourceSnapshot {
        let configuration = configuration(for: .get)
        let (now, elapsed) = (core.timeSource.now, core.timeSource.elapsed)
        let (snapshot, checked) = state.withLock { state in
            (
                ResourceSnapshot(
                    data: state.latestData, error: state.latestError, isLoading: state.loading.load != nil,
                    isUpToDate: state.isUpToDate(now: now, elapsed: elapsed, configuration: configuration)),
                state.loading.isCacheChecked
            )
        }
        if !checked { startCacheCheckIfNeeded() }
        return snapshot
    }
}
