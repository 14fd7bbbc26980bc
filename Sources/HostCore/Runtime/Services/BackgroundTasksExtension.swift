import Glibc
import ServiceABI

/// Extension `dev.servicehost.background-tasks/1` (background_tasks.h): UIKit's
/// `beginBackgroundTask` / `endBackgroundTask` for C and Swift services, its thunks checking
/// the arguments and calling the service's HostFunctions, in process and in a worker.
enum BackgroundTasksExtension {
    /// Its row: the id and the table, host-owned and never freed.
    static let row: HostExtensions.Row = {
        return HostExtensions.Row(
            id: SH_BACKGROUND_TASKS_ID,
            table: sh_background_tasks(
                size: UInt32(MemoryLayout<sh_background_tasks>.size), version: SH_BACKGROUND_TASKS_VERSION,
                begin: { host, name, expired, context in
                    guard let functions = HostAdapter.functions(host), let name, name.pointee != 0, let expired else {
                        return SH_BACKGROUND_TASK_INVALID
                    }
                    let target = ExpiredTarget(function: expired, context: context)
                    return functions.beginBackgroundTask(name: String(cString: name)) { target.call($0) }
                },
                end: { host, task in
                    guard let functions = HostAdapter.functions(host) else { return Int32(SH_INVALID) }
                    return functions.endBackgroundTask(task)
                }))
    }()

    /// Where a task's expiry goes: the service's function and its context pointer.
    private struct ExpiredTarget: @unchecked Sendable {
        // @unchecked: the host never touches `context`, only hands it back to the service's
        // function once, on the main thread, as background_tasks.h promises.
        let function: sh_background_task_expired_fn
        let context: UnsafeMutableRawPointer?

        func call(_ task: UInt32) { function(context, task) }
    }
}
