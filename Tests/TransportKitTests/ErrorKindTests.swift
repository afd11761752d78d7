import Testing
import TransportKit

/// Error kinds are structs over private enums: compared with `==`, named for logs, and open to new kinds.
@Suite("Error kinds")
struct ErrorKindTests {
    @Test("Each kind has its own name, equal only to itself; the transient ones are the retryable three")
    func transportKinds() {
        let kinds = TransportError.Kind.allCases
        #expect(Set(kinds.map(\.name)).count == kinds.count, "names are distinct")
        for kind in kinds {
            #expect(kinds.filter { $0 == kind }.count == 1)
            #expect("\(kind)" == kind.name)
        }
        #expect(TransportError.Kind.timedOut.name == "timedOut")
        #expect(Set(kinds.filter(\.isTransient)) == [.connectionRefused, .connectionFailed, .timedOut])
    }
}
