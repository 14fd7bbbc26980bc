import Glibc
import Synchronization

/// `<state>/sentinel`: a small memory-mapped file that says, at every moment, which service
/// the host's main thread is inside and for which event, so that after an unclean exit
/// (a crash, a kill, a forced exit) the next start can say who was running.
///
/// Rationale: the dispatch path must not pay a system call per event. The file is mapped
/// `MAP_SHARED` and CallTracker writes two plain stores per call; the kernel's page cache
/// holds them, so they survive the process dying (not the machine crashing, which is fine:
/// the sentinel is a diagnosis, not a journal). The file is removed at a clean exit, so its
/// presence at start means the previous run did not end cleanly. An exclusive `flock` keeps
/// two hosts from sharing one.
///
/// Layout (little-endian, 64 KiB):
///
/// ```text
///    0  u32 magic "SHSN"    4  u32 version 1
///    8  i32 pid            12  u32 reserved
///   16  i64 start time (seconds since the epoch)
///   24  i64 service index (-1: no call in progress)
///   32  u32 event kind     36  u32 reserved
///   40  u32 loading path length, then the path (bytes 44..<4140): a plugin being loaded
/// 4160  u32 id count, u32 id bytes, then the ids, NUL-separated (to the end of the file)
/// ```
public final class Sentinel: Sendable {
    /// The file's name in the state directory.
    public static let fileName = "sentinel"
    static let size = 65536
    static let magic: UInt32 = 0x4E53_4853  // "SHSN"
    static let serviceOffset = 24, eventOffset = 32, loadingOffset = 40, loadingCapacity = 4096, idsOffset = 4160

    /// The file's path.
    public let path: String
    // Holds the flock for the process lifetime.
    private let descriptor: FileDescriptor
    // The mapping, for the process lifetime. Written only on the main thread (CallTracker's
    // enter/leave/register run there), read by nobody in this process: the next run reads the file.
    nonisolated(unsafe) let page: UnsafeMutableRawPointer

    private init(path: String, descriptor: consuming FileDescriptor, page: UnsafeMutableRawPointer) {
        self.path = path
        self.descriptor = descriptor
        self.page = page
    }

    /// What an unclean exit left in the sentinel.
    public struct PreviousRun: Sendable, Equatable, CustomStringConvertible {
        /// The process that did not exit cleanly.
        public var pid: Int32
        /// When it started, ISO 8601 UTC.
        public var started: String
        /// The service it was inside, when a call was in progress.
        public var service: String?
        /// The event that call was for.
        public var event: String?
        /// The plugin it was loading, when that was what it was doing.
        public var loading: String?

        public var description: String {
            let what: String
            if let service, let event {
                what = "service \(service) was handling \(event)"
            } else if let loading {
                what = "it was loading \(loading)"
            } else {
                what = "no service call was in progress"
            }
            return "the previous run (pid \(pid), started \(started)) did not exit cleanly: \(what)"
        }
    }

    /// Why a sentinel could not be set up.
    public enum OpenError: Error, CustomStringConvertible {
        /// Another live host holds the sentinel of this state directory.
        case inUse(path: String)
        /// A system call failed.
        case system(SystemError)

        public var description: String {
            switch self {
            case .inUse(let path): "another host is running with \(path)"
            case .system(let error): error.description
            }
        }
    }

    /// Opens (creating) the sentinel in `stateDirectory`, reads what an unclean exit left in it,
    /// and marks this run as started. The file is removed by `exit()` (an atexit handler).
    public static func open(stateDirectory: String) throws(OpenError) -> (Sentinel, PreviousRun?) {
        let path = (stateDirectory.hasSuffix("/") ? stateDirectory : stateDirectory + "/") + fileName
        do { try DirectoryHandle.makeDirectories(stateDirectory) } catch { throw .system(error) }
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600) } catch {
            throw .system(error)
        }
        let fd = file.rawValue
        do {
            _ = try retryingOnInterrupt("flock", path) { flock(fd, LOCK_EX | LOCK_NB) }
        } catch {
            throw error.errno == EWOULDBLOCK ? .inUse(path: path) : .system(error)
        }
        let old = (try? file.read(at: 0, count: size, path: path)) ?? []
        let previous = old.count >= idsOffset + 8 ? decode(old) : nil
        // Blocks allocated for real before mapping: a store into a sparse page on a full disk
        // would kill the host with SIGBUS. Without the blocks, the host runs without a sentinel.
        let allocated = posix_fallocate(file.rawValue, 0, off_t(size))
        guard allocated == 0 else {
            // A failed sentinel must not be taken for an unclean exit at the next start.
            unlink(path)
            throw .system(SystemError(operation: "posix_fallocate", path: path, errno: allocated))
        }
        guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, file.rawValue, 0), mapped != MAP_FAILED
        else {
            throw .system(.current("mmap", path))
        }
        // Only what `decode` reads without a length before it (the header, the loading path's
        // length, the id count and length) is cleared: clearing all 64 KiB faulted in and
        // dirtied 16 pages at every start; the bytes past a length are never read.
        memset(mapped, 0, idsOffset + 8)
        mapped.storeBytes(of: magic, toByteOffset: 0, as: UInt32.self)
        mapped.storeBytes(of: UInt32(1), toByteOffset: 4, as: UInt32.self)
        mapped.storeBytes(of: getpid(), toByteOffset: 8, as: Int32.self)
        mapped.storeBytes(of: Int64(time(nil)), toByteOffset: 16, as: Int64.self)
        mapped.storeBytes(of: Int64(-1), toByteOffset: serviceOffset, as: Int64.self)
        let sentinel = Sentinel(path: path, descriptor: file, page: mapped)
        removalAtExit.withLock { $0 = path }
        atexit { removalAtExit.withLock { path in path.map { _ = unlink($0) } } }
        return (sentinel, previous)
    }

    /// Reads a sentinel's bytes; nil when they are not one.
    static func decode(_ bytes: [UInt8]) -> PreviousRun? {
        func integer<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
        }
        guard bytes.count >= idsOffset + 8, integer(0, UInt32.self) == magic, integer(4, UInt32.self) == 1 else {
            return nil
        }
        var run = PreviousRun(pid: integer(8, Int32.self), started: startText(integer(16, Int64.self)))
        let index = integer(serviceOffset, Int64.self)
        let ids = Self.ids(bytes)
        if index >= 0 {
            run.service = index < ids.count ? ids[Int(index)] : "service #\(index)"
            let kind = integer(eventOffset, UInt32.self)
            run.event = EventKind(rawValue: kind)?.name ?? "event \(kind)"
        }
        let loadingLength = Int(integer(loadingOffset, UInt32.self))
        if loadingLength > 0 && loadingLength <= loadingCapacity {
            run.loading = String(
                decoding: bytes[(loadingOffset + 4)..<(loadingOffset + 4 + loadingLength)], as: UTF8.self)
        }
        return run
    }

    /// The latest start time a sentinel can say: 9999-12-31T23:59:59Z, the last of four-digit years.
    static let latestStart: Int64 = 253_402_300_799

    /// A sentinel's start time as ISO 8601 UTC; "invalid time (N)" out of 1970...9999, which no
    /// host wrote (the file is damaged or was written by hand) and `gmtime` cannot always say.
    static func startText(_ seconds: Int64) -> String {
        (0...latestStart).contains(seconds) ? Clock.iso(seconds: Int(seconds)) : "invalid time (\(seconds))"
    }

    private static func ids(_ bytes: [UInt8]) -> [String] {
        let count = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: idsOffset, as: UInt32.self)) }
        let length = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: idsOffset + 4, as: UInt32.self)) }
        let start = idsOffset + 8
        guard length <= bytes.count - start else { return [] }
        let ids = bytes[start..<start + length].split(separator: 0, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        return Array(ids.prefix(count))
    }

    // MARK: Writing (main thread)

    /// The call in progress: two plain stores, no system call.
    @inline(__always) static func record(_ page: UnsafeMutableRawPointer, event: UInt32) {
        page.storeBytes(of: event, toByteOffset: eventOffset, as: UInt32.self)
    }

    @inline(__always) static func record(_ page: UnsafeMutableRawPointer, service: Int) {
        page.storeBytes(of: Int64(service), toByteOffset: serviceOffset, as: Int64.self)
    }

    /// The word of `page` that names the service being called, for the dispatcher's C loop, which
    /// stores it as `record(_:service:)` does.
    @inline(__always) static func serviceWord(_ page: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Int64> {
        (page + serviceOffset).assumingMemoryBound(to: Int64.self)
    }

    /// The ids behind the service indexes (when services are loaded); also ends a "loading" mark.
    /// Returns where each id written ends in the list, for ``register(_:id:index:ends:)``.
    @discardableResult
    static func register(_ page: UnsafeMutableRawPointer, ids: [String]) -> [Int] {
        var ends: [Int] = []
        ends.reserveCapacity(ids.count)
        page.storeBytes(of: UInt32(0), toByteOffset: idsOffset, as: UInt32.self)
        for id in ids {
            guard let end = write(page, id, at: ends.last ?? 0) else { break }
            ends.append(end)
        }
        publish(page, ends)
        return ends
    }

    /// Makes `id` service `index`: the ids before it stay as ``register(_:ids:)`` wrote them
    /// (`ends` says where each ends, and is updated), the ones after it are dropped. An attach
    /// writes one id this way: writing every running service's id again at each attach made a
    /// start quadratic in its plugins. Also ends a "loading" mark.
    static func register(_ page: UnsafeMutableRawPointer, id: String, index: Int, ends: inout [Int]) {
        page.storeBytes(of: UInt32(0), toByteOffset: idsOffset, as: UInt32.self)
        ends.removeSubrange(min(index, ends.count)...)
        // An index past the ids written (the list was full) is left unnamed, as it was.
        if ends.count == index, let end = write(page, id, at: ends.last ?? 0) { ends.append(end) }
        publish(page, ends)
    }

    /// Writes `id` and its NUL at byte `start` of the list; returns where it ends, or nil when
    /// the page has no room for it.
    private static func write(_ page: UnsafeMutableRawPointer, _ id: String, at start: Int) -> Int? {
        var id = id
        return id.withUTF8 { bytes in
            guard start + bytes.count + 1 <= size - idsOffset - 8 else { return nil }
            let target = page + idsOffset + 8 + start
            if bytes.count > 0 { target.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            target.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
            return start + bytes.count + 1
        }
    }

    /// Publishes the list of `ends.count` ids: its length, then its count (a reader takes a
    /// count of 0 as no list), and clears the "loading" mark.
    private static func publish(_ page: UnsafeMutableRawPointer, _ ends: [Int]) {
        page.storeBytes(of: UInt32(ends.last ?? 0), toByteOffset: idsOffset + 4, as: UInt32.self)
        page.storeBytes(of: UInt32(ends.count), toByteOffset: idsOffset, as: UInt32.self)
        page.storeBytes(of: UInt32(0), toByteOffset: loadingOffset, as: UInt32.self)
    }

    /// Marks the plugin being loaded (its ELF constructors and entry run in this process).
    func loading(_ path: String) {
        page.storeBytes(of: UInt32(0), toByteOffset: Self.loadingOffset, as: UInt32.self)
        // Straight from the string's own bytes: copying them into an array first was ~1300
        // instructions per plugin at every start (callgrind).
        var path = path
        let count = path.withUTF8 { bytes in
            let count = min(bytes.count, Self.loadingCapacity)
            if count > 0 { (page + Self.loadingOffset + 4).copyMemory(from: bytes.baseAddress!, byteCount: count) }
            return count
        }
        page.storeBytes(of: UInt32(count), toByteOffset: Self.loadingOffset, as: UInt32.self)
    }
}

// The sentinel to remove when the process exits normally (an atexit handler cannot capture).
private let removalAtExit = Locked<String?>(nil)
