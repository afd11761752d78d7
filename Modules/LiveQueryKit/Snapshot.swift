/// What a lane carries to one observer: a result with the commit it reflects, or why the query could not be
/// evaluated.
///
/// Two results are equal when their documents are, whatever their commits: an unchanged result is not delivered
/// again (the observer is told, through ``DeliveredResult``, that what it has is current at the later commit). The
/// engine compares each new result with the previous one once, and numbers its contents (`content`): equal numbers
/// are equal documents, so a lane, which only ever sees one query's results, skips a result unchanged since the
/// last one computed without comparing documents. Different numbers can still be equal documents (a change and its
/// undoing, both computed): ``DeliveredResult/isUnchanged(_:_:)`` compares those against what was delivered.
enum Snapshot: Sendable, Equatable {
    case documents([Document], commit: UInt64, content: UInt64)
    case failure(EvaluationFailure)

    static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
        switch (lhs, rhs) {
        case (.documents(_, _, let left), .documents(_, _, let right)): left == right
        case (.failure(let left), .failure(let right)): left == right
        default: false
        }
    }
}

/// A failed evaluation, as observers receive it. Each failure is delivered: two are never "unchanged".
struct EvaluationFailure: Sendable, Equatable {
    let error: any Error
    let serial: UInt64

    static func == (lhs: EvaluationFailure, rhs: EvaluationFailure) -> Bool { lhs.serial == rhs.serial }
}
