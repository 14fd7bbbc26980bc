// Fuzz target `registry`: a state directory's registry.bin through the registry cache's reader,
// as the host reads it at start (scripts/fuzz builds it).
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // As a host reads it: the groups walked, then each directory's group on its own; the sound
    // groups a save copies unchanged read back the same.
    if let groups = try? RegistryFile.groups(bytes) {
        for group in groups { _ = try? RegistryFile.decode(bytes, onlyIn: group.directory) }
        let sound = groups.filter(\.isIntact)
        let copied = RegistryFile.encode([:], keeping: sound)
        guard (try? RegistryFile.groups(copied))?.count == sound.count else {
            fatalError("registry: the sound groups copied do not read back")
        }
    }
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
