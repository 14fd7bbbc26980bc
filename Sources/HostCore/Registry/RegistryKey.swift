import Glibc

/// What a registry entry is keyed by: the file's path and the `stat` fields that change
/// whenever its bytes can have changed (GStreamer's registry key, plus the inode change time,
/// which no `touch -d` can put back).
struct RegistryKey: Hashable, Sendable {
    /// The plugin path, escaped as ``PathBytes`` says.
    var path: String
    /// Device, inode, size, modification and change time: what the loader checks again at
    /// load, and what names the file's stored copy.
    var identity: FileIdentity

    init(path: String, identity: FileIdentity) {
        self.path = path
        self.identity = identity
    }

    /// The key of `path` whose `stat` is `status`.
    init(path: String, status: stat) {
        self.init(path: path, identity: FileIdentity(status))
    }

    /// Hashes the identity alone (equal keys have equal identities, so equal hashes): five
    /// integers rather than the path's bytes, for every plugin file at every start, once when
    /// its directory's entries are read and once when it is looked up. Two paths of one
    /// identity (hard links) share a bucket and are told apart by `==`.
    func hash(into hasher: inout Hasher) { hasher.combine(identity) }
}

/// What the registry keeps of one plugin file: the raw bytes the inspector reads, so the one
/// decoder (``PluginMetadata/decode(_:)``) reads cached and fresh metadata alike.
struct RegistryEntry: Equatable, Sendable {
    /// Whether the file defines `servicehost_entry` in its dynamic symbols.
    var definesEntry: Bool
    /// The `servicehost_meta` section's bytes; nil when the file has none.
    var section: [UInt8]?
    /// Where the section lies once loaded, relative to the library's load address (`sh_addr`);
    /// 0 when it is not loaded with the code. The loader matches a descriptor whose id points
    /// into it by address, without reading the id (a page fault per plugin, ~1.5 µs).
    var sectionAddress: UInt64 = 0
}
