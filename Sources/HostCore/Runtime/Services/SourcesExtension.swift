import ServiceABI

/// Extension `dev.servicehost.sources/1` (sources.h): a system source written as a plugin
/// moves the app, watches descriptors on the main loop and sets a current state the host
/// answers, as the built-in sources do through ``AppDriver``. In process only: a service in a
/// worker has functions that are not ``PluginSourceFunctions`` and gets SH_UNSUPPORTED.
enum SourcesExtension {
    /// Its row: the id and the table, host-owned and never freed.
    static let row: HostExtensions.Row = {
        return HostExtensions.Row(
            id: SH_SOURCES_ID,
            table: sh_sources(
                size: UInt32(MemoryLayout<sh_sources>.size), version: SH_SOURCES_VERSION,
                move_app: { host, move in
                    guard let functions = HostAdapter.functions(host) as? PluginSourceFunctions else {
                        return Int32(SH_UNSUPPORTED)
                    }
                    guard let move = AppMove(rawValue: move) else { return Int32(SH_INVALID) }
                    return functions.moveApp(move)
                },
                watch: { host, fd, readable, context in
                    guard let functions = HostAdapter.functions(host) as? PluginSourceFunctions, fd >= 0,
                        let readable
                    else { return 0 }
                    let target = ReadableTarget(function: readable, context: context)
                    return functions.watch(fd) { target.call($0) }
                },
                unwatch: { host, watch in
                    guard let functions = HostAdapter.functions(host) as? PluginSourceFunctions else {
                        return Int32(SH_UNSUPPORTED)
                    }
                    return functions.unwatch(watch)
                },
                set_current_state: { host, name, json, length in
                    guard let functions = HostAdapter.functions(host) as? PluginSourceFunctions else {
                        return Int32(SH_UNSUPPORTED)
                    }
                    guard let name, name.pointee != 0, let json, length <= Int.max else { return Int32(SH_INVALID) }
                    let bytes = Array(UnsafeRawBufferPointer(start: json, count: Int(length)))
                    return functions.setCurrentState(String(cString: name), json: bytes)
                }))
    }()

    /// Where a watch's readiness goes: the service's function and its context pointer.
    private struct ReadableTarget: @unchecked Sendable {
        // @unchecked: the host never touches `context`, only hands it back to the service's
        // function on the main thread, as sources.h promises.
        let function: sh_source_readable_fn
        let context: UnsafeMutableRawPointer?

        func call(_ fd: Int32) { function(context, fd) }
    }
}

/// What extension sources/1 reaches: in process only (ServiceContext, and TestHost's functions).
package protocol PluginSourceFunctions: AnyObject, Sendable {
    /// `move_app`: SH_OK, the move carried out on the main thread after the current call. [main-thread]
    func moveApp(_ move: AppMove) -> Int32
    /// `watch`: `readable` on the main thread whenever `fd` is; the watch's id, 0 when refused. [main-thread]
    func watch(_ fd: Int32, readable: @escaping @MainActor @Sendable (Int32) -> Void) -> UInt64
    /// `unwatch`: SH_OK or SH_NOT_FOUND. [main-thread]
    func unwatch(_ watch: UInt64) -> Int32
    /// `set_current_state`: SH_OK, or SH_INVALID for a built-in name or JSON that is not an object. [main-thread]
    func setCurrentState(_ name: String, json: [UInt8]) -> Int32
}
