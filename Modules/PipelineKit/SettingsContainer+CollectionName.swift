import DocumentStoreKit
import PersistenceKit

extension SettingsContainer {
    /// The collection name at `key`, which must be present: a missing one, or one that is not a collection name, is
    /// recorded (and the result is empty).
    func collectionName(_ key: Key) throws -> String {
        let name = try require(key, as: String.self) ?? ""
        if contains(key) {
            do {
                try CollectionName.validate(name)
            } catch {
                try invalid(key, error.message)
            }
        }
        return name
    }
}
