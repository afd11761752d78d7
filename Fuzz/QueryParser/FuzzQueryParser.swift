// libFuzzer target: the live-query language. Any bytes, as query text with a few $args bound, must either compile to
// a predicate (which must then evaluate against a document without trapping) or throw a QueryError whose column
// lies within the query. Build and run: Scripts/fuzz.sh query-parser.

import DocumentStoreKit
import LiveQueryKit
import TetherJSON

let args: [String: JSONValue] = [
    "store": "abc123", "n": 3, "list": ["a", 1, true, .null], "flag": true, "none": .null,
]
let document: JSONValue = [
    "_id": "d1", "store_id": "abc123", "name": "Pear", "qty": 4, "price": 1.25, "tags": ["fruit", "green"],
    "nested": ["a": ["b": 2]], "flag": false, "missing": .null,
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let predicate = try DocumentPredicate(query: text, args: args)
        _ = predicate.matches(document)
    } catch {
        if let column = error.column, column < 1 || column > text.count + 1 {
            fatalError("QueryError column \(column) outside a query of \(text.count) characters: \(error)")
        }
    }
    return 0
}

// SwiftPM links an executable's entry point as `<product>_main` (aliased to `main`); hand it to libFuzzer's driver.
// swift-format-ignore: AlwaysUseLowerCamelCase
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("FuzzQueryParser_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzz)
}
