// TransportKit speaks in `URL`, `Data` and `Date`, and re-exports where they come from so that its users and
// ResourceKit need no import of their own: on Linux the light FoundationEssentials, the full Foundation only where
// FoundationEssentials does not exist.
#if canImport(FoundationEssentials)
@_exported public import FoundationEssentials
#else
@_exported public import Foundation
#endif
