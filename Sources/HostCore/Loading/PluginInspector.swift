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
        /// The file's identity when inspected (device, inode, size, mtime), for caches and reload.
        public let identity: FileIdentity
    }

    /// Inspects `path`, opening it read-only and non-blocking; nothing is executed.
    public static func inspect(path: String) -> Result<Inspected, LoadFailure> {
        do throws(LoadFailure.Reason) {
            let file: ReadOnlyFile
            do { file = try ReadOnlyFile(path: path) } catch { throw .system(error) }
            // The file may have changed since it was scanned; never parse a FIFO or device.
            if let kind = PluginScanner.nonRegularKind(file.status.st_mode) { throw .notRegularFile(kind: kind) }
            let image = try ELFImage(file: file)
            guard try image.definesDynamicSymbol(SH_ENTRY_SYMBOL) else { throw .noEntrySymbol }
            guard let section = try image.sectionBytes(named: SH_METADATA_SECTION) else {
                throw .noMetadata
            }
            let metadata = try PluginMetadata.decode(section)
            guard metadata.abiMin <= metadata.abiVersion else {
                throw .invalidMetadata("abi_min \(metadata.abiMin) is above abi_version \(metadata.abiVersion)")
            }
            guard metadata.abiMin <= hostABI.upperBound, metadata.abiVersion >= hostABI.lowerBound else {
                throw .abiMismatch(
                    pluginMin: metadata.abiMin, pluginMax: metadata.abiVersion,
                    hostMin: hostABI.lowerBound, hostMax: hostABI.upperBound)
            }
            return .success(Inspected(path: path, metadata: metadata, identity: FileIdentity(file.status)))
        } catch {
            return .failure(LoadFailure(path: path, reason: error))
        }
    }
}

/// What identifies one version of a file: a changed plugin has a new identity.
public struct FileIdentity: Hashable, Sendable {
    /// Device and inode.
    public let device: UInt64, inode: UInt64
    /// Size in bytes and modification time in nanoseconds.
    public let size: Int64, modified: Int64

    init(_ status: Glibc.stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }
}
