import Foundation
import TestSupport

/// Runs the built `servicehost-metagen` on manifests written into a scratch folder.
final class Metagen {
    let scratch: Scratch

    init() throws { scratch = try Scratch() }

    /// What one run left: its status, its stderr line and the generated Swift file (if any).
    struct Run {
        let status: Int32
        let stderr: String
        let output: String?
        let manifest: String
    }

    /// Writes `manifest` to `servicehost.json` and runs the generator on it.
    func run(_ manifest: String) throws -> Run {
        try run(bytes: Array(manifest.utf8))
    }

    func run(bytes: [UInt8]) throws -> Run {
        let name = "m\(UInt64.random(in: 0 ... .max))"
        let path = try scratch.write("\(name).json", bytes)
        let output = scratch.file("\(name).swift")
        let result = try Command.run(try Repository.product("servicehost-metagen"), [path, output])
        return Run(
            status: result.status, stderr: result.stderr, output: try? String(contentsOfFile: output, encoding: .utf8),
            manifest: path)
    }

    /// The manifest error a failed run printed: `(JSON path, reason)` from
    /// "<manifest>: <JSON path>: <reason>", or nil when the run did not fail that way.
    static func error(of run: Run) -> (path: String, reason: String)? {
        guard run.status == 1, run.output == nil else { return nil }
        let prefix = run.manifest + ": "
        guard run.stderr.hasPrefix(prefix), run.stderr.hasSuffix("\n") else { return nil }
        let rest = run.stderr.dropFirst(prefix.count).dropLast()
        guard !rest.contains("\n") else { return nil }
        // The JSON path holds no ": " (keys are the manifest's own, indices are numbers).
        guard let separator = rest.range(of: ": ") else { return ("", String(rest)) }
        return (String(rest[..<separator.lowerBound]), String(rest[separator.upperBound...]))
    }

    /// The record bytes of a generated file: every `UInt64` word of every
    /// `@section("servicehost_meta")` global, little-endian, in file order.
    static func recordBytes(of swift: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var inRecord = false
        for line in swift.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("private let _servicehostMeta") {
                inRecord = true
                continue
            }
            if line == "]" {
                inRecord = false
                continue
            }
            guard inRecord else { continue }
            let word = line.trimmingCharacters(in: .whitespaces).prefix { $0 != "," }
            guard word.hasPrefix("0x"),
                let value = UInt64(word.dropFirst(2).replacingOccurrences(of: "_", with: ""), radix: 16)
            else { continue }
            bytes += (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        return bytes
    }
}
