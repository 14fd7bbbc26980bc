import ServiceABI

extension HostContext {
    /// Moves the app as the host's own sources do (extension `dev.servicehost.sources/1`): a
    /// service watching something outside the host (a compositor's focus, an ignition line)
    /// sends the app to the background or brings it back, in UIKit's order and only from the
    /// states the move applies to. Carried out on the main thread right after the current call
    /// returns. Main thread only.
    /// - Throws: ``HostError/notAttached`` before attach, ``HostError/unsupported`` in a worker
    ///   process (sources run in the host's process) or from an older host.
    public func moveApp(_ move: AppMove) throws(HostError) {
        let (raw, table) = try sources()
        guard let moveApp = table.pointee.move_app else { throw .unsupported }
        let code = moveApp(raw, move.rawValue)
        if code != SH_OK { throw HostError(code: code) }
    }

    /// Calls `readable` on the main thread whenever `fd` is readable (level-triggered: read
    /// what is there, or it is called again), until the watch ends (``SourceWatch/end()``) or the
    /// service stops. `fd` stays the service's: close it only after the watch ended. Main thread
    /// only.
    /// - Throws: ``HostError/notAttached``, ``HostError/invalid`` for a negative `fd`,
    ///   ``HostError/unsupported`` in a worker process or from an older host, or
    ///   ``HostError/failed(code:)`` when the host's loop refused the descriptor (it logs why).
    public func watch(_ fd: Int32, readable: @escaping (Int32) -> Void) throws(HostError) -> SourceWatch {
        let (raw, table) = try sources()
        guard fd >= 0 else { throw .invalid }
        guard let watch = table.pointee.watch, let unwatch = table.pointee.unwatch else { throw .unsupported }
        let handler = Unmanaged.passRetained(SourceWatch.Handler(readable))
        let id = watch(
            raw, fd,
            { context, fd in
                guard let context else { return }
                Unmanaged<SourceWatch.Handler>.fromOpaque(context).takeUnretainedValue().readable(fd)
            }, handler.toOpaque())
        guard id != 0 else {
            handler.release()
            throw .failed(code: Int32(SH_ERROR))
        }
        return SourceWatch(id: id, handler: handler, host: raw, unwatch: unwatch)
    }

    /// From now on the host answers request `name` (another service's `host.request`, `host ctl
    /// request`) itself with `state`, a JSON object: the source's current state, as the host
    /// answers `network.current`. Main thread only.
    /// - Throws: ``HostError/invalid`` for an empty name, a built-in source's name
    ///   (`network.current`, `power.current`) or a state that is not an object;
    ///   ``HostError/notAttached``; ``HostError/unsupported`` in a worker process or from an
    ///   older host.
    public func setCurrentState(_ name: String, _ state: JSONValue) throws(HostError) {
        let (raw, table) = try sources()
        guard !name.isEmpty, !name.utf8.contains(0) else { throw .invalid }
        guard let setCurrentState = table.pointee.set_current_state else { throw .unsupported }
        let json = Array(state.serialized.utf8)
        let code = json.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { setCurrentState(raw, name, $0.baseAddress, $0.count) }
        }
        if code != SH_OK { throw HostError(code: code) }
    }

    /// The sources extension, from a host that offers it.
    private func sources() throws(HostError) -> (UnsafePointer<sh_host>, UnsafePointer<sh_sources>) {
        let raw = try attached()
        guard let pointer = self.extension(id: SH_SOURCES_ID) else { throw .unsupported }
        let table = pointer.assumingMemoryBound(to: sh_sources.self)
        guard table.pointee.size >= SH_SOURCES_SIZE_V1 else { throw .unsupported }
        return (raw, table)
    }
}

/// A descriptor the host's main loop watches for a service (``HostContext/watch(_:readable:)``).
/// Main thread only. A watch never ended keeps its handler until the process ends (the host
/// stops calling it when the service stops).
public final class SourceWatch {
    /// The host's id for the watch.
    public let id: UInt64
    /// Whether the handler may still be called (false once ``end()`` ran).
    public private(set) var isWatching = true

    private let handler: Unmanaged<Handler>
    // The host's table and the service's sh_host: host-owned for the process lifetime.
    private let host: UnsafePointer<sh_host>
    private let unwatch: @convention(c) (UnsafePointer<sh_host>?, UInt64) -> Int32

    /// The service's closure, behind the context pointer the host hands back.
    final class Handler {
        let readable: (Int32) -> Void
        init(_ readable: @escaping (Int32) -> Void) { self.readable = readable }
    }

    init(
        id: UInt64, handler: Unmanaged<Handler>, host: UnsafePointer<sh_host>,
        unwatch: @escaping @convention(c) (UnsafePointer<sh_host>?, UInt64) -> Int32
    ) {
        self.id = id
        self.handler = handler
        self.host = host
        self.unwatch = unwatch
    }

    /// Ends the watch: the handler is not called again, and is released. Main thread only.
    public func end() {
        guard isWatching else { return }
        isWatching = false
        _ = unwatch(host, id)
        handler.release()
    }
}
