import Glibc

/// A fleet bundle written as its pieces come (issue 41), for the host to check by its path and
/// the bridge to unpack from: in memory (`memfd_create`, named `/proc/self/fd/N`, which the
/// host, in this process, opens), so its bytes are never assembled in the bridge's heap, never
/// written to a disk and never need removing from one; else, without memfd_create or /proc,
/// `bundle.tar` in a folder of the bridge's own (0700), removed with it.
///
/// Only the bridge's fleet queue appends to it; closed (and its folder removed) on deinit.
final class BundleFile: Sendable {
    let descriptor: Int32
    /// The path the host opens to check it.
    let path: String
    /// The folder holding it when it is on disk.
    private let folder: String?

    init() throws(RouteProblem) {
        // 1: MFD_CLOEXEC, which Glibc's Swift module does not import.
        if let descriptor = Self.memfdCreate?("servicehost-bundle", 1), descriptor >= 0 {
            let path = "/proc/self/fd/\(descriptor)"
            if access(path, R_OK) == 0 {
                (self.descriptor, self.path, folder) = (descriptor, path, nil)
                return
            }
            close(descriptor)
        }
        let folder = try FleetAgent.temporaryFolder()
        let path = folder + "/bundle.tar"
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let problem = RouteProblem("\(path): \(String(cString: strerror(errno)))")
            FleetAgent.remove(folder)
            throw problem
        }
        (self.descriptor, self.path, self.folder) = (descriptor, path, folder)
    }

    deinit {
        close(descriptor)
        if let folder { FleetAgent.remove(folder) }
    }

    /// Writes `bytes` after what was written before.
    func append(_ bytes: [UInt8]) throws(RouteProblem) {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(RouteProblem) in try FleetAgent.write(raw, to: descriptor, path: path) }
        }.get()
    }

    /// Calls `body` with the file's first `size` bytes, mapped read-only (read into memory
    /// where it cannot be mapped).
    func withContents<R>(size: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard size > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        if let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED {
            defer { munmap(mapped, size) }
            return try body(UnsafeRawBufferPointer(start: mapped, count: size))
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { pread(descriptor, raw.baseAddress! + offset, size - offset, off_t(offset)) }
            }
            guard count > 0 else { throw RouteProblem("\(path): \(String(cString: strerror(errno)))") }
            offset += count
        }
        return try bytes.withUnsafeBytes { try body($0) }
    }

    /// `memfd_create(2)`, which Glibc's Swift module does not declare; nil where the C library
    /// has none (glibc before 2.27).
    private typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32
    private static let memfdCreate: MemfdCreate? = dlsym(nil, "memfd_create").map {
        unsafeBitCast($0, to: MemfdCreate.self)
    }
}
