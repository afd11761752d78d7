import Foundation
import TetherConcurrency
import TransportKit

extension TransportConformanceSuite {
    static let progressChecks: [ConformanceCheck] = [
        ConformanceCheck(
            "progress",
            "progress reports count the body sent and the body received, never go down, and end at the totals"
        ) { context in
            let transport = try await context.transport()
            let upload = Data(repeating: 7, count: 256 << 10)
            let post = TransportRequest(method: .post, url: context.host.url("/echo"), body: upload)
            let sent = try await reports(transport, post)
            try requireOrdered(sent, post)
            let lastSent = try requireLast(sent, post)
            try require(
                lastSent.bytesToSend == Int64(upload.count) && lastSent.bytesSent == Int64(upload.count),
                "\(post): the last report says \(lastSent), expected all \(upload.count) bytes sent")
            try require(lastSent.hasResponse, "\(post): no report after the response began (\(lastSent))")

            let size = 1 << 20
            let get = TransportRequest(url: context.host.url("/bytes/\(size)"))
            let received = try await reports(transport, get)
            try requireOrdered(received, get)
            let lastReceived = try requireLast(received, get)
            try require(
                lastReceived.bytesToReceive == Int64(size) && lastReceived.bytesReceived == Int64(size),
                "\(get): the last report says \(lastReceived), expected \(size) of \(size) bytes received")
            try require(lastReceived.fractionCompleted == 1, "\(get): \(lastReceived) is not complete")

            let chunked = TransportRequest(url: context.host.url("/chunked/4/65536"))
            let streamed = try await reports(transport, chunked)
            try requireOrdered(streamed, chunked)
            let lastStreamed = try requireLast(streamed, chunked)
            try require(
                lastStreamed.bytesToReceive == nil && lastStreamed.bytesReceived == 4 * 65_536,
                "\(chunked): the last report says \(lastStreamed), expected 262144 bytes of no stated length")
        }
    ]

    /// Sends `request` and returns every progress report, in order.
    private static func reports(_ transport: any Transport, _ request: TransportRequest) async throws
        -> [TransportProgress]
    {
        let reports = LockedValue<[TransportProgress]>([])
        let response = try await transport.send(request) { report in reports.withLock { $0.append(report) } }
        try require(response.status == 200, "\(request): status \(response.status), expected 200")
        return reports.withLock { $0 }
    }

    private static func requireOrdered(_ reports: [TransportProgress], _ request: TransportRequest) throws {
        for (earlier, later) in zip(reports, reports.dropFirst()) {
            try require(
                later.bytesSent >= earlier.bytesSent && later.bytesReceived >= earlier.bytesReceived,
                "\(request): progress went down, from \(earlier) to \(later)")
        }
    }

    private static func requireLast(_ reports: [TransportProgress], _ request: TransportRequest) throws
        -> TransportProgress
    {
        guard let last = reports.last else {
            throw ConformanceFailure(message: "\(request): no progress was reported")
        }
        return last
    }
}
