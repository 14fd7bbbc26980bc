// Fuzz target `registry`: a state directory's registry.bin through the registry cache's reader,
// as the host reads it at start (scripts/fuzz builds it).
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    guard let entries = try? RegistryFile.decode(bytes) else { return 0 }
    // What the reader accepts, the writer writes back to the same entries.
    guard (try? RegistryFile.decode(RegistryFile.encode(entries))) == entries else {
        fatalError("registry: a decoded file does not survive encode + decode")
    }
    // Each cached section goes through the one metadata decoder, as a cache hit does.
    for entry in entries.values {
        if let section = entry.section { _ = try? PluginMetadata.decode(section) }
    }
    return 0
}
