// Fuzz target `registry`: a state directory's registry.bin through the registry cache's reader,
// as the host reads it at start (scripts/fuzz builds it).
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // As a host reads it (RegistryReader: the header, then each directory's group on its own,
    // each read's length checked); then as if the file had shrunk after its size was taken, so
    // every read may come back short. The sound groups a save copies unchanged read back the same.
    let shrunk = bytes.first.map { Int($0 % 64) + 1 } ?? 0
    for source in [RegistryBytesInMemory(bytes), RegistryBytesInMemory(bytes, claimedSize: bytes.count + shrunk)].map(
        Bounded.init)
    {
        guard let reader = try? RegistryReader(source) else { continue }
        var sound: [RegistryFile.Group] = []
        for slot in reader.slots {
            guard reader.slot(of: slot.directory) == slot, let group = try? reader.group(slot) else { continue }
            if (try? RegistryFile.entries(of: group)) != nil { sound.append(group) }
        }
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

/// The bytes in memory, read only within the size they claim: the real file (``ReadOnlyFile``)
/// allocates what it is asked for before it reads, so a read past the size is a reader that
/// would reserve what a damaged length says.
struct Bounded: RegistryBytes {
    let inner: RegistryBytesInMemory
    var size: Int { inner.size }

    func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        guard offset >= 0, count >= 0, count <= size - offset else {
            fatalError("registry: asked \(count) bytes at \(offset) of a file of \(size)")
        }
        return try inner.read(at: offset, count: count)
    }
}
