// Fuzz target `bundle`: a fleet bundle's archive (issue 41), bytes from the broker, through
// MQTTBridge's ustar reader (BundleArchive). Checks what must hold for every archive it
// accepts: every file's bytes lie inside the input, its name is plain (no `/`, no leading `.`),
// no name twice, at most maxFiles files and maxBytes in all. A refusal must be a
// BundleArchiveError (a trap or an overflow is the finding).
//
// Built and run by scripts/fuzz (`scripts/fuzz bundle`), with the MQTTCodec module compiled
// from Plugins/MQTTBridge/Codec; seeds in Tests/Fuzz/Corpus/bundle, replayed by MQTTCodecTests.
import MQTTCodec

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    BundleChecks.archive(bytes)
    return 0
}

enum BundleChecks {
    static func archive(_ bytes: [UInt8]) {
        let archive: BundleArchive
        do { archive = try BundleArchive(bytes) } catch {
            guard !error.detail.isEmpty else { fatalError("bundle: a refusal without a reason") }
            return
        }
        guard archive.entries.count <= BundleArchive.maxFiles else { fatalError("bundle: too many files") }
        var names = Set<String>()
        var total = 0
        for entry in archive.entries {
            guard entry.bytes.lowerBound >= 0, entry.bytes.upperBound <= bytes.count else {
                fatalError("bundle: \(entry.name)'s bytes \(entry.bytes) outside the \(bytes.count) of the input")
            }
            guard !entry.name.isEmpty, !entry.name.contains("/"), !entry.name.hasPrefix("."),
                names.insert(entry.name).inserted
            else { fatalError("bundle: the name \(entry.name) was accepted") }
            total += entry.bytes.count
        }
        guard total <= BundleArchive.maxBytes else { fatalError("bundle: \(total) bytes accepted") }
    }
}
