import CSystem
import Glibc

/// A shared library opened with `dlopen(RTLD_NOW | RTLD_LOCAL)`, deliberately never closed.
///
/// Why never `dlclose`: a library holding Swift code registers type metadata, protocol
/// conformances and strings with the Swift runtime, which keeps pointers into the
/// library's memory for the rest of the process; unloading it would leave those dangling.
/// C plugins are kept loaded too, so every plugin has one rule.
struct DynamicLibrary {
    let path: String
    private let handle: UnsafeMutableRawPointer

    /// Opens `path`; the error is `dlerror()`'s text, with `path` (the stored copy's, see
    /// ``StoredCopy``) shown as `name`, the file the user knows.
    init(path: String, naming name: String) throws(LoadFailure.Reason) {
        _ = dlerror()  // clear a stale error
        // `withCString`, not the implicit conversion: that one copies the path into a new
        // array (two allocations a plugin); this lends the string's own bytes.
        guard let handle = path.withCString({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }) else {
            var error = Self.lastError() ?? "unknown error"
            if error.hasPrefix(path + ":") { error = name + error.dropFirst(path.count) }
            throw .dlopen(error)
        }
        self.path = path
        self.handle = handle
    }

    /// The address of `name`, or the `dlerror()` text.
    func symbol(_ name: String) throws(LoadFailure.Reason) -> UnsafeMutableRawPointer {
        _ = dlerror()
        guard let address = name.withCString({ dlsym(handle, $0) }) else {
            throw .entry("dlsym(\(name)) failed: \(Self.lastError() ?? "symbol is NULL")")
        }
        return address
    }

    /// The address the library's link-time addresses are relative to (0: unknown).
    var loadAddress: UInt { UInt(csystem_load_address(handle)) }

    private static func lastError() -> String? { dlerror().map { String(cString: $0) } }
}
