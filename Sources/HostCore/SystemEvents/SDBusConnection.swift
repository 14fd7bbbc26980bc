import CSystem
import Dispatch
import Glibc

/// One sd-bus connection served by the main thread's loop (``MainLoop``): its descriptor is a
/// watch there, its timeout (method call replies, authentication) a main-queue timer, and every
/// callback (a signal matched, a reply) runs on the main thread inside ``pump()``.
///
/// The system bus is `sd_bus_open_system`, which honours `DBUS_SYSTEM_BUS_ADDRESS` (how tests
/// point the host at a private `dbus-daemon`); the session bus is `sd_bus_open_user`
/// (`DBUS_SESSION_BUS_ADDRESS`).
@MainActor
final class SDBusConnection {
    /// The bus, as errors name it: "the system bus".
    let name: String
    private let library: SDBusLibrary
    private let bus: SDBusLibrary.Bus
    private var watch: MainLoop.Watch?
    // One timer for the connection's life, moved to sd-bus's next deadline when it changes:
    // a timer made and cancelled at every pump was a cost on every message.
    private var timer: DispatchSourceTimer?
    // The deadline `timer` is set for (µs of CLOCK_MONOTONIC, as sd_bus_get_timeout says);
    // UInt64.max while it is not set (never set, fired, or no deadline).
    private var armedDeadline = UInt64.max
    // sd_bus_process may not be re-entered (a callback that makes a call pumps again): a pump
    // asked for while one runs is done by the running one's loop.
    private var pumping = false
    private var pumpAgain = false
    private var closed = false
    private var matches: [Match] = []
    /// The calls awaiting their reply, each holding its slot: closing the connection releases
    /// them without a reply (sd-bus calls no callback for a call it drops).
    private var calls: [Pending] = []

    /// Which bus to open.
    enum Kind {
        case system
        case user
    }

    /// Connects to `kind`'s bus and serves it on the main loop.
    /// - Throws: libsystemd's absence (dlerror), the connection's failure (errno).
    init(_ kind: Kind) throws(SDBusError) {
        let library: SDBusLibrary
        switch SDBusLibrary.shared {
        case .success(let loaded): library = loaded
        case .failure(let error): throw error
        }
        var bus: SDBusLibrary.Bus?
        let operation = kind == .system ? "sd_bus_open_system" : "sd_bus_open_user"
        let result = kind == .system ? library.openSystem(&bus) : library.openUser(&bus)
        guard result >= 0, let bus else { throw SDBusError(operation: operation, reason: .system(errno: -result)) }
        self.library = library
        self.bus = bus
        self.name = kind == .system ? "the system bus" : "the session bus"
        let fd = library.getFD(bus)
        guard fd >= 0 else {
            _ = library.flushCloseUnref(bus)
            throw SDBusError(operation: "sd_bus_get_fd", reason: .system(errno: -fd))
        }
        let watch = MainLoop.shared.watch(fd, name: name)
        watch.setHandler { [weak self] in MainActor.assumeIsolated { self?.pump() } }
        do { try watch.resume() } catch {
            _ = library.flushCloseUnref(bus)
            throw SDBusError(operation: "epoll_ctl(\(name))", reason: .system(errno: error.errno))
        }
        self.watch = watch
        // The connection's set-up (authentication, Hello) goes on in pump's steps.
        DispatchQueue.main.async { [weak self] in MainActor.assumeIsolated { self?.pump() } }
    }

    /// Leaves the loop and closes the connection (its matches stop, its calls are dropped
    /// without a reply). Not from inside one of its own callbacks: sd-bus is running then.
    func close() {
        guard !closed else { return }
        closed = true
        watch?.cancel()
        watch = nil
        timer?.cancel()
        timer = nil
        for match in matches { _ = library.slotUnref(match.slot) }
        matches = []
        for call in calls { _ = library.slotUnref(call.slot) }
        calls = []
        _ = library.flushCloseUnref(bus)
    }

    /// Processes everything sd-bus has to do now (messages read, writes, timeouts), running
    /// callbacks on this thread, then writes out what is queued and re-arms the timeout.
    func pump() {
        guard !closed else { return }
        if pumping {
            pumpAgain = true
            return
        }
        pumping = true
        defer { pumping = false }
        repeat {
            pumpAgain = false
            while library.process(bus, nil) > 0 {}
        } while pumpAgain
        // A write that would have blocked waits for POLLOUT, which the loop does not watch:
        // the host's messages are small, so it is written out here.
        if library.getEvents(bus) & Int32(POLLOUT) != 0 { _ = library.flush(bus) }
        armTimeout()
    }

    private func armTimeout() {
        var deadline: UInt64 = 0
        if library.getTimeout(bus, &deadline) < 0 { deadline = .max }
        guard deadline != armedDeadline else { return }
        armedDeadline = deadline
        let timer = self.timer ?? makeTimer()
        guard deadline != .max else {
            timer.schedule(deadline: .distantFuture)
            return
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        let delay = deadline > nowMicroseconds ? deadline - nowMicroseconds : 0
        timer.schedule(deadline: .now() + .microseconds(Int(min(delay, UInt64(Int32.max)))))
    }

    private func makeTimer() -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                // Fired: not set any more, so the pump sets it again even for the same deadline
                // (a timer may fire a little early).
                self?.armedDeadline = .max
                self?.pump()
            }
        }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
        self.timer = timer
        return timer
    }

    // MARK: Signals

    /// A signal match: `handler` runs on the main thread for each signal, until the connection closes.
    private final class Match {
        let handler: (SDBusMessage) -> Void
        var slot: SDBusLibrary.Slot?
        init(_ handler: @escaping (SDBusMessage) -> Void) { self.handler = handler }
    }

    /// Calls `handler` with each `interface.member` signal `sender` emits on `path`.
    func matchSignal(
        sender: String, path: String, interface: String, member: String,
        handler: @escaping (SDBusMessage) -> Void
    ) throws(SDBusError) {
        let match = Match(handler)
        var slot: SDBusLibrary.Slot?
        let result = library.matchSignal(
            bus, &slot, sender, path, interface, member,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                let match = Unmanaged<Match>.fromOpaque(userdata).takeUnretainedValue()
                MainActor.assumeIsolated {
                    match.handler(SDBusMessage(library: SDBusConnection.loaded, pointer: OpaquePointer(message)))
                }
                return 0
            }, Unmanaged.passUnretained(match).toOpaque())
        guard result >= 0 else {
            throw SDBusError(operation: "sd_bus_match_signal(\(interface).\(member))", reason: .system(errno: -result))
        }
        match.slot = slot
        matches.append(match)
        pump()
    }

    /// The library the callbacks read messages with (loaded: a connection exists).
    fileprivate nonisolated static var loaded: SDBusLibrary {
        guard case .success(let library) = SDBusLibrary.shared else { fatalError("sd-bus callback without sd-bus") }
        return library
    }

    // MARK: Calls

    /// An argument of a method call.
    enum Argument {
        case string(String)
        case uint32(UInt32)
        case int32(Int32)
        /// `as`.
        case strings([String])
        /// `a{sv}`: a freedesktop hints dictionary.
        case dictionary([(key: String, value: Variant)])
    }

    /// A value of an `a{sv}` dictionary.
    enum Variant {
        case string(String)
        case bool(Bool)
    }

    /// Calls `interface.member` on `destination`'s `path` and waits for the reply (at most
    /// `timeout` microseconds; 0: sd-bus's default of 25 s); `read` reads it while it is valid.
    func call<R>(
        destination: String, path: String, interface: String, member: String, _ arguments: [Argument] = [],
        timeout: UInt64 = 0, read: (SDBusMessage) throws(SDBusError) -> R
    ) throws(SDBusError) -> R {
        let operation = "\(interface).\(member)"
        let message = try methodCall(destination: destination, path: path, interface: interface, member: member)
        defer { _ = library.messageUnref(message) }
        try append(arguments, to: message, operation)
        var error = csystem_sd_bus_error(name: nil, message: nil, need_free: 0)
        var reply: SDBusLibrary.Message?
        let called = library.call(bus, message, timeout, &error, &reply)
        // Messages read while waiting (a signal) are queued, and the descriptor may not be
        // readable again: they are processed from the main queue, outside any callback.
        DispatchQueue.main.async { [weak self] in MainActor.assumeIsolated { self?.pump() } }
        defer { library.errorFree(&error) }
        guard called >= 0, let reply else {
            throw SDBusError(operation: operation, reason: Self.reason(error, errno: -called))
        }
        defer { _ = library.messageUnref(reply) }
        return try read(SDBusMessage(library: library, pointer: reply))
    }

    /// A call whose reply is awaited on the main loop: `reply` runs on the main thread with the
    /// reply (borrowed for the call) or the error, once (the peer's error, a timeout after
    /// `timeout` microseconds or sd-bus's 25 s, the connection lost), and never once the
    /// connection was closed. Nothing waits on the main thread meanwhile.
    func callAsync(
        destination: String, path: String, interface: String, member: String, _ arguments: [Argument] = [],
        timeout: UInt64 = 0, reply: @escaping (Result<SDBusMessage, SDBusError>) -> Void
    ) throws(SDBusError) {
        let operation = "\(interface).\(member)"
        let message = try methodCall(destination: destination, path: path, interface: interface, member: member)
        defer { _ = library.messageUnref(message) }
        try append(arguments, to: message, operation)
        let pending = Pending(operation, reply)
        // `calls` holds the box and its slot until the reply (sd-bus calls back exactly once
        // while the slot lives) or close(), which unrefs the slot: no callback, nothing leaked.
        let called = library.callAsync(
            bus, &pending.slot, message,
            { message, userdata, _ in
                guard let userdata else { return 0 }
                let pending = Unmanaged<Pending>.fromOpaque(userdata).takeUnretainedValue()
                let library = SDBusConnection.loaded
                MainActor.assumeIsolated {
                    // sd-bus holds its own reference on the slot during this callback.
                    pending.connection?.finished(pending)
                    guard let message else { return }
                    let reply = OpaquePointer(message)
                    if let error = library.messageGetError(reply), error.pointee.name != nil {
                        pending.reply(
                            .failure(
                                SDBusError(
                                    operation: pending.operation,
                                    reason: SDBusConnection.reason(error.pointee, errno: EIO))))
                    } else {
                        pending.reply(.success(SDBusMessage(library: library, pointer: reply)))
                    }
                }
                return 0
            }, Unmanaged.passUnretained(pending).toOpaque(), timeout)
        guard called >= 0 else {
            throw SDBusError(operation: "sd_bus_call_async(\(operation))", reason: .system(errno: -called))
        }
        pending.connection = self
        calls.append(pending)
        pump()
    }

    /// How many calls await their reply.
    var pendingCalls: Int { calls.count }

    /// `pending` got its reply: its box and slot are let go.
    private func finished(_ pending: Pending) {
        guard let index = calls.firstIndex(where: { $0 === pending }) else { return }
        calls.remove(at: index)
        _ = library.slotUnref(pending.slot)
        pending.slot = nil
    }

    /// A call awaiting its reply, and its slot (this connection's reference).
    private final class Pending {
        let operation: String
        let reply: (Result<SDBusMessage, SDBusError>) -> Void
        var slot: SDBusLibrary.Slot?
        weak var connection: SDBusConnection?
        init(_ operation: String, _ reply: @escaping (Result<SDBusMessage, SDBusError>) -> Void) {
            self.operation = operation
            self.reply = reply
        }
    }

    private func methodCall(
        destination: String, path: String, interface: String, member: String
    ) throws(SDBusError) -> SDBusLibrary.Message {
        var message: SDBusLibrary.Message?
        let made = library.newMethodCall(bus, &message, destination, path, interface, member)
        guard made >= 0, let message else {
            throw SDBusError(
                operation: "sd_bus_message_new_method_call(\(interface).\(member))", reason: .system(errno: -made))
        }
        return message
    }

    private func append(_ arguments: [Argument], to message: SDBusLibrary.Message, _ operation: String)
        throws(SDBusError)
    {
        func check(_ result: Int32, _ function: String) throws(SDBusError) {
            guard result >= 0 else {
                throw SDBusError(operation: "\(function)(\(operation))", reason: .system(errno: -result))
            }
        }
        // For strings sd-bus takes the string itself, not a pointer to it.
        func string(_ text: String) throws(SDBusError) {
            try check(text.withCString { library.appendBasic(message, 0x73, $0) }, "sd_bus_message_append_basic")
        }
        func open(_ type: UInt8, _ contents: String) throws(SDBusError) {
            try check(library.openContainer(message, CChar(type), contents), "sd_bus_message_open_container")
        }
        func close() throws(SDBusError) {
            try check(library.closeContainer(message), "sd_bus_message_close_container")
        }
        for argument in arguments {
            switch argument {
            case .string(let text): try string(text)
            case .uint32(var value):
                try check(library.appendBasic(message, 0x75, &value), "sd_bus_message_append_basic")  // "u"
            case .int32(var value):
                try check(library.appendBasic(message, 0x69, &value), "sd_bus_message_append_basic")  // "i"
            case .strings(let texts):
                try open(0x61, "s")  // "as"
                for text in texts { try string(text) }
                try close()
            case .dictionary(let entries):
                try open(0x61, "{sv}")
                for entry in entries {
                    try open(0x65, "sv")  // "e": a dictionary entry
                    try string(entry.key)
                    switch entry.value {
                    case .string(let text):
                        try open(0x76, "s")  // "v"
                        try string(text)
                    case .bool(let flag):
                        try open(0x76, "b")
                        var value: Int32 = flag ? 1 : 0
                        try check(library.appendBasic(message, 0x62, &value), "sd_bus_message_append_basic")
                    }
                    try close()
                    try close()
                }
                try close()
            }
        }
    }

    /// A trivial property (`type` "t", "b", "u"…) of `interface` on `destination`'s `path`.
    func property<T: FixedWidthInteger>(
        destination: String, path: String, interface: String, name property: String, type: Character, as _: T.Type
    ) throws(SDBusError) -> T {
        var error = csystem_sd_bus_error(name: nil, message: nil, need_free: 0)
        defer { library.errorFree(&error) }
        var value = T.zero
        let result = library.getPropertyTrivial(
            bus, destination, path, interface, property, &error, CChar(type.asciiValue!), &value)
        DispatchQueue.main.async { [weak self] in MainActor.assumeIsolated { self?.pump() } }
        guard result >= 0 else {
            throw SDBusError(operation: "\(interface).\(property)", reason: Self.reason(error, errno: -result))
        }
        return value
    }

    fileprivate nonisolated static func reason(_ error: csystem_sd_bus_error, errno: Int32) -> SDBusError.Reason {
        if let name = error.name {
            return .peer(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? "")
        }
        return .system(errno: errno)
    }
}

/// A message borrowed for the duration of a callback or a reply's reading: its arguments are
/// read in order, each with its D-Bus type.
struct SDBusMessage {
    fileprivate let library: SDBusLibrary
    fileprivate let pointer: SDBusLibrary.Message

    /// The next argument, a boolean ("b").
    func readBool() throws(SDBusError) -> Bool {
        var value: Int32 = 0
        try read(0x62, &value, "b")
        return value != 0
    }

    /// The next argument, an object path ("o"), copied.
    func readObjectPath() throws(SDBusError) -> String {
        var value: UnsafePointer<CChar>?
        try read(0x6F, &value, "o")
        guard let value else {
            throw SDBusError(operation: "sd_bus_message_read_basic(o)", reason: .system(errno: EBADMSG))
        }
        return String(cString: value)
    }

    /// The next argument, a descriptor ("h"), duplicated (close-on-exec) for the caller to own
    /// and close: the message owns its own.
    func readDescriptor() throws(SDBusError) -> Int32 {
        var value: Int32 = -1
        try read(0x68, &value, "h")
        let copy = fcntl(value, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw SDBusError(operation: "fcntl(F_DUPFD_CLOEXEC)", reason: .system(errno: errno)) }
        return copy
    }

    /// The next argument, an unsigned 32-bit integer ("u").
    func readUInt32() throws(SDBusError) -> UInt32 {
        var value: UInt32 = 0
        try read(0x75, &value, "u")
        return value
    }

    /// The next argument, a string ("s"), copied.
    func readString() throws(SDBusError) -> String {
        var value: UnsafePointer<CChar>?
        try read(0x73, &value, "s")
        return value.map { String(cString: $0) } ?? ""
    }

    /// The next argument, an array of strings ("as"), copied.
    func readStrings() throws(SDBusError) -> [String] {
        let entered = library.enterContainer(pointer, 0x61, "s")
        guard entered > 0 else {
            throw SDBusError(
                operation: "sd_bus_message_enter_container(as)", reason: .system(errno: entered == 0 ? ENXIO : -entered)
            )
        }
        var strings: [String] = []
        while true {
            var value: UnsafePointer<CChar>?
            let result = library.readBasic(pointer, 0x73, &value)
            guard result > 0 else {
                if result < 0 {
                    throw SDBusError(operation: "sd_bus_message_read_basic(s)", reason: .system(errno: -result))
                }
                break
            }
            strings.append(value.map { String(cString: $0) } ?? "")
        }
        _ = library.exitContainer(pointer)
        return strings
    }

    private func read(_ type: CChar, _ value: UnsafeMutableRawPointer, _ name: String) throws(SDBusError) {
        let result = library.readBasic(pointer, type, value)
        guard result > 0 else {
            // 0: no more arguments; the peer sent fewer than its interface says.
            throw SDBusError(
                operation: "sd_bus_message_read_basic(\(name))", reason: .system(errno: result == 0 ? ENXIO : -result))
        }
    }
}
