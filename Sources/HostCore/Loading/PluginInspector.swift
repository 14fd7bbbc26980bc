import Glibc
import ServiceABI

/// Reads what a plugin file is without running any of it: ELF checks, the entry symbol,
/// the static metadata and the ABI range. `host inspect` and the loader share it.
public enum PluginInspector {
    /// The ABI versions this host speaks.
    public static let hostABI: ClosedRange<UInt32> = SH_ABI_VERSION_MIN...SH_ABI_VERSION

    /// A file that passed every check that does not run code.
    public struct Inspected: Sendable {
        /// The file's path.
        public let path: String
        /// Its metadata.
        public let metadata: PluginMetadata
        /// The file's identity when inspected (device, inode, size, mtime, ctime), for caches and reload.
        public let identity: FileIdentity
        /// How long its inspection took, in nanoseconds (`host ctl blame`): carried with the file
        /// rather than in a table by path (two hashes of its path per plugin at each start).
        public internal(set) var inspectNanoseconds: UInt64 = 0
        /// Where the metadata section lies once loaded, relative to the load address (0: not
        /// loaded with the code): the loader matches descriptors by it (``PluginLoader``).
        var metadataAddress: UInt64 = 0
    }

    /// Inspects `path`, opening it read-only and non-blocking; nothing is executed. With a
    /// `registry`, a file whose key (path and `stat`) is there costs one `stat`; a file read
    /// is recorded in it.
    public static func inspect(path: String, registry: RegistryCache? = nil) -> Result<Inspected, LoadFailure> {
        inspect(path: path, registry: registry, status: nil)
    }

    /// ``inspect(path:registry:)`` of a file the scanner just checked with `status` (its `stat`),
    /// which keys the registry: a cached file then costs no system call here. A file that changes
    /// after it was checked is still caught: the loader compares its identity when it copies it.
    static func inspect(_ checked: PluginScanner.Checked, registry: RegistryCache?) -> Result<Inspected, LoadFailure> {
        inspect(path: checked.path, registry: registry, status: checked.status)
    }

    private static func inspect(path: String, registry: RegistryCache?, status known: stat?) -> Result<
        Inspected, LoadFailure
    > {
        do throws(LoadFailure.Reason) {
            if let registry {
                var status = known ?? stat()
                if known != nil || stat(PathBytes.cString(path), &status) == 0, nonRegularKind(status) == nil {
                    let key = RegistryKey(path: path, status: status)
                    if let entry = registry.lookup(key) {
                        return .success(try inspected(path, entry, identity: key.identity))
                    }
                }
            }
            let file: ReadOnlyFile
            do { file = try ReadOnlyFile(pluginPath: path) } catch { throw .system(error) }
            // The file may have changed since it was scanned; never parse a FIFO or device.
            if let kind = nonRegularKind(file.status) { throw .notRegularFile(kind: kind) }
            let image = try ELFImage(file: file)
            // No entry symbol: the section is not read (nor its errors reported), as before.
            let definesEntry = try image.definesDynamicSymbol(SH_ENTRY_SYMBOL)
            let section = definesEntry ? try image.loadedSection(named: SH_METADATA_SECTION) : nil
            let entry = RegistryEntry(
                definesEntry: definesEntry, section: section?.bytes, sectionAddress: section?.address ?? 0)
            // Recorded only when the file did not change while it was read: the key must name these bytes.
            var after = stat()
            if let registry, fstat(file.descriptor.rawValue, &after) == 0,
                RegistryKey(path: path, status: after) == RegistryKey(path: path, status: file.status)
            {
                registry.store(RegistryKey(path: path, status: file.status), entry)
            }
            return .success(try inspected(path, entry, identity: FileIdentity(file.status)))
        } catch {
            return .failure(LoadFailure(path: path, reason: error))
        }
    }

    private static func nonRegularKind(_ status: stat) -> String? { PluginScanner.nonRegularKind(status.st_mode) }

    /// The checks on what a file holds, the same whether it was just read or came from the registry.
    private static func inspected(_ path: String, _ entry: RegistryEntry, identity: FileIdentity) throws(LoadFailure
        .Reason) -> Inspected
    {
        guard entry.definesEntry else { throw .noEntrySymbol }
        guard let section = entry.section else { throw .noMetadata }
        let metadata = try PluginMetadata.decode(section)
        guard metadata.abiMin <= metadata.abiVersion else {
            throw .invalidMetadata("abi_min \(metadata.abiMin) is above abi_version \(metadata.abiVersion)")
        }
        guard metadata.abiMin <= hostABI.upperBound, metadata.abiVersion >= hostABI.lowerBound else {
            throw .abiMismatch(
                pluginMin: metadata.abiMin, pluginMax: metadata.abiVersion,
                hostMin: hostABI.lowerBound, hostMax: hostABI.upperBound)
        }
        return Inspected(path: path, metadata: metadata, identity: identity, metadataAddress: entry.sectionAddress)
    }
}

/// What identifies one version of a file: a changed plugin has a new identity.
public struct FileIdentity: Hashable, Sendable {
    /// Device and inode.
    public let device: UInt64, inode: UInt64
    /// Size in bytes and modification time in nanoseconds.
    public let size: Int64, modified: Int64
    /// The inode change time in nanoseconds: no `touch -d` can put it back, so a file rewritten
    /// in place with its old size and modification time still gets a new identity.
    public let changed: Int64

    init(_ status: Glibc.stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(status.st_mtim.tv_nsec)
        changed = Int64(status.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(status.st_ctim.tv_nsec)
    }
}
