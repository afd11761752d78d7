import ResourceKit
import Testing
import TransportKit

@Suite("ResourceError kinds")
struct ResourceErrorKindTests {
    @Test("A kind carries its detail, compares by it, and names it")
    func details() {
        let notFound = ResourceError.Kind.httpStatus(404)
        #expect(notFound == .httpStatus(404))
        #expect(notFound != .httpStatus(500))
        #expect(notFound.httpStatus == 404)
        #expect(notFound.transportKind == nil)
        #expect("\(notFound)" == "httpStatus(404)")
        let refused = ResourceError.Kind.transport(.connectionRefused)
        #expect(refused.transportKind == .connectionRefused)
        #expect(refused != .transport(.timedOut))
        #expect("\(refused)" == "transport(connectionRefused)")
        #expect(ResourceError.Kind.cancelled.httpStatus == nil)
    }
}
