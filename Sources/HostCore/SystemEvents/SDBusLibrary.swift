import CSystem
import Glibc

/// libsystemd's sd-bus, opened with `dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL)` the first
/// time a part asks for it and never closed; the handful of functions the host uses, declared
/// here (no build-time header or package). The host runs without it: ``shared`` is then the
/// reason, which each source that needs the bus states once in its `source.off` line.
///
/// Every function is called on the main thread only (sd-bus objects are not thread-safe).
struct SDBusLibrary: @unchecked Sendable {
    // @unchecked: every member is an immutable C function pointer into a library never closed.
    typealias Bus = OpaquePointer
    typealias Message = OpaquePointer
    typealias Slot = OpaquePointer
    typealias Handler = csystem_sd_bus_handler

    let openSystem: @convention(c) (UnsafeMutablePointer<Bus?>?) -> Int32
    let openUser: @convention(c) (UnsafeMutablePointer<Bus?>?) -> Int32
    let getFD: @convention(c) (Bus?) -> Int32
    let getEvents: @convention(c) (Bus?) -> Int32
    let getTimeout: @convention(c) (Bus?, UnsafeMutablePointer<UInt64>?) -> Int32
    let process: @convention(c) (Bus?, UnsafeMutablePointer<Message?>?) -> Int32
    let flush: @convention(c) (Bus?) -> Int32
    let flushCloseUnref: @convention(c) (Bus?) -> Bus?
    let matchSignal:
        @convention(c) (
            Bus?, UnsafeMutablePointer<Slot?>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, Handler?, UnsafeMutableRawPointer?
        ) -> Int32
    let newMethodCall:
        @convention(c) (
            Bus?, UnsafeMutablePointer<Message?>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, UnsafePointer<CChar>?
        ) -> Int32
    let appendBasic: @convention(c) (Message?, CChar, UnsafeRawPointer?) -> Int32
    let openContainer: @convention(c) (Message?, CChar, UnsafePointer<CChar>?) -> Int32
    let closeContainer: @convention(c) (Message?) -> Int32
    let enterContainer: @convention(c) (Message?, CChar, UnsafePointer<CChar>?) -> Int32
    let exitContainer: @convention(c) (Message?) -> Int32
    let call:
        @convention(c) (
            Bus?, Message?, UInt64, UnsafeMutablePointer<csystem_sd_bus_error>?, UnsafeMutablePointer<Message?>?
        ) -> Int32
    let callAsync:
        @convention(c) (Bus?, UnsafeMutablePointer<Slot?>?, Message?, Handler?, UnsafeMutableRawPointer?, UInt64) ->
            Int32
    let messageGetError: @convention(c) (Message?) -> UnsafePointer<csystem_sd_bus_error>?
    let messageUnref: @convention(c) (Message?) -> Message?
    let readBasic: @convention(c) (Message?, CChar, UnsafeMutableRawPointer?) -> Int32
    let getPropertyTrivial:
        @convention(c) (
            Bus?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafeMutablePointer<csystem_sd_bus_error>?, CChar, UnsafeMutableRawPointer?
        ) -> Int32
    let errorFree: @convention(c) (UnsafeMutablePointer<csystem_sd_bus_error>?) -> Void
    let slotUnref: @convention(c) (Slot?) -> Slot?

    /// The file opened: the soname, found by the dynamic linker's search.
    static let soname = "libsystemd.so.0"

    /// The library, or why it cannot be used (loaded once, on first use).
    static let shared: Result<SDBusLibrary, SDBusError> = {
        do throws(SDBusError) { return .success(try SDBusLibrary(path: soname)) } catch { return .failure(error) }
    }()

    /// Opens `path` and resolves every function; the first that fails is the error.
    init(path: String) throws(SDBusError) {
        _ = dlerror()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw SDBusError(operation: "dlopen(\(path))", reason: .library(Self.lastError()))
        }
        func symbol<F>(_ name: String, _: F.Type) throws(SDBusError) -> F {
            _ = dlerror()
            guard let address = dlsym(handle, name) else {
                throw SDBusError(operation: "dlsym(\(name))", reason: .library(Self.lastError()))
            }
            return unsafeBitCast(address, to: F.self)
        }
        openSystem = try symbol("sd_bus_open_system", type(of: openSystem))
        openUser = try symbol("sd_bus_open_user", type(of: openUser))
        getFD = try symbol("sd_bus_get_fd", type(of: getFD))
        getEvents = try symbol("sd_bus_get_events", type(of: getEvents))
        getTimeout = try symbol("sd_bus_get_timeout", type(of: getTimeout))
        process = try symbol("sd_bus_process", type(of: process))
        flush = try symbol("sd_bus_flush", type(of: flush))
        flushCloseUnref = try symbol("sd_bus_flush_close_unref", type(of: flushCloseUnref))
        matchSignal = try symbol("sd_bus_match_signal", type(of: matchSignal))
        newMethodCall = try symbol("sd_bus_message_new_method_call", type(of: newMethodCall))
        appendBasic = try symbol("sd_bus_message_append_basic", type(of: appendBasic))
        openContainer = try symbol("sd_bus_message_open_container", type(of: openContainer))
        closeContainer = try symbol("sd_bus_message_close_container", type(of: closeContainer))
        enterContainer = try symbol("sd_bus_message_enter_container", type(of: enterContainer))
        exitContainer = try symbol("sd_bus_message_exit_container", type(of: exitContainer))
        call = try symbol("sd_bus_call", type(of: call))
        callAsync = try symbol("sd_bus_call_async", type(of: callAsync))
        messageGetError = try symbol("sd_bus_message_get_error", type(of: messageGetError))
        messageUnref = try symbol("sd_bus_message_unref", type(of: messageUnref))
        readBasic = try symbol("sd_bus_message_read_basic", type(of: readBasic))
        getPropertyTrivial = try symbol("sd_bus_get_property_trivial", type(of: getPropertyTrivial))
        errorFree = try symbol("sd_bus_error_free", type(of: errorFree))
        slotUnref = try symbol("sd_bus_slot_unref", type(of: slotUnref))
    }

    private static func lastError() -> String { dlerror().map { String(cString: $0) } ?? "unknown error" }
}

/// Why a bus operation failed, keeping the cause: `dlerror()`'s text, the negative errno an
/// sd-bus function returned, or the D-Bus error a peer answered (its name and message).
public struct SDBusError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What failed, in sd-bus's terms: "sd_bus_open_system", "Inhibit".
    public let operation: String
    /// The cause.
    public let reason: Reason

    /// The causes a bus operation fails for.
    public enum Reason: Sendable, Equatable {
        /// libsystemd could not be opened or lacks a function: `dlerror()`'s text.
        case library(String)
        /// An sd-bus function returned `-errno`.
        case system(errno: Int32)
        /// The peer answered with a D-Bus error.
        case peer(name: String, message: String)
    }

    /// An error of `operation` for `reason`.
    public init(operation: String, reason: Reason) {
        self.operation = operation
        self.reason = reason
    }

    /// Why a source on the system bus (sleep, lock, power) is off when this error stopped it:
    /// libsystemd missing, no system bus, or `peer`, what did not answer ("logind does not answer
    /// on the system bus").
    func sourceOff(peer: String) -> String {
        switch reason {
        case .library: "libsystemd (sd-bus) is not available: \(self)"
        case .system: "no system bus: \(self)"
        case .peer: "\(peer): \(self)"
        }
    }

    /// The errno, when the cause is one.
    public var errno: Int32? {
        if case .system(let errno) = reason { return errno }
        return nil
    }

    public var description: String {
        switch reason {
        case .library(let text): "\(operation) failed: \(text)"
        case .system(let errno): "\(operation) failed: \(String(cString: strerror(errno)))"
        case .peer(let name, let message): "\(operation) failed: \(name): \(message)"
        }
    }
}
