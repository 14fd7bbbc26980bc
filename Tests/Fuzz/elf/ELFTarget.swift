import ServiceABI

// Fuzz target `elf`: a plugin file's bytes through the ELF reader and the static metadata
// decoder, as `host inspect` and the loader read them (scripts/fuzz builds it).
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // The same steps as PluginInspector.inspect, from memory rather than a file.
    if let image = try? ELFImage(source: ELFBytes(contents: bytes)) {
        _ = try? image.definesDynamicSymbol(SH_ENTRY_SYMBOL)
        if let section = try? image.sectionBytes(named: SH_METADATA_SECTION) {
            _ = try? PluginMetadata.decode(section)
        }
    }
    // The records alone too, so mutations of a metadata section need no valid ELF around them.
    _ = try? PluginMetadata.decode(bytes)
    return 0
}
