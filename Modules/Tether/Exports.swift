// The umbrella module: `import Tether` brings in every Kit.

@_exported public import DeliveryKit
@_exported public import DocumentStoreKit
@_exported public import EntityCacheKit
@_exported public import LiveQueryKit
@_exported public import MemoryPressureKit
@_exported public import MirrorKit
@_exported public import OwnershipKit
@_exported public import PersistenceKit
@_exported public import RegistryKit
@_exported public import ResourceKit
@_exported public import TetherClock
@_exported public import TetherJSON
@_exported public import TransportKit
