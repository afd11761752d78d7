import LiveQueryKit
import TetherJSON

/// The largest `seq` in a result: the newest commit it reflects.
func newestSeq(_ documents: [JSONValue]) -> Int {
    documents.reduce(-1) { max($0, $1["seq"]?.intValue ?? -1) }
}

/// The largest `seq` in a Tether result.
func newestSeq(_ documents: [Document]) -> Int {
    documents.reduce(-1) { max($0, $1.value["seq"]?.intValue ?? -1) }
}

/// Results a Tether store has computed: queries run and results brought up to date from changed documents.
func resultsComputed(_ statistics: LiveQueryStatistics) -> Int {
    statistics.evaluations + statistics.incrementalUpdates
}
