// libFuzzer target: the configuration loader. Any bytes, as configuration.yaml, must either load (and then
// assemble with in-memory parts) or throw a ConfigurationError with at least one issue, each with a message and,
// when it has a line, a line within the text. Build and run: Scripts/fuzz.sh configuration-loader.

import Foundation
import PipelineKit

let loader = ConfigurationLoader(registry: .core, environment: [:])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    // Lines as YAML counts them: \n, \r\n and a lone \r each end one (Swift's newlines are a superset, so this
    // is an upper bound).
    let lines = text.reduce(1) { $1.isNewline ? $0 + 1 : $0 }
    do {
        _ = try loader.load(yaml: text, file: "fuzz.yaml", baseDirectory: URL(fileURLWithPath: "/nonexistent"))
    } catch {
        guard !error.issues.isEmpty else { fatalError("a ConfigurationError with no issue") }
        for issue in error.issues {
            if issue.message.isEmpty { fatalError("an issue with no message: \(issue)") }
            if let line = issue.line, line < 1 || line > lines {
                fatalError("issue line \(line) outside a text of \(lines) lines: \(issue)")
            }
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

@_cdecl("FuzzConfigurationLoader_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzz)
}
