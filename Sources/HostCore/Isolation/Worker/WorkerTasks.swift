/// The background tasks a worker's services opened (background-tasks/1) and their expiration
/// handlers, by task id (the host's), until they end or the host's `taskExpired` comes. Main
/// thread only, as background_tasks.h says.
@MainActor
final class WorkerTasks {
    /// The worker's one table: a worker process runs one session.
    static let shared = WorkerTasks()

    private var handlers: [UInt32: @MainActor @Sendable (UInt32) -> Void] = [:]

    /// Keeps task `task`'s expiration handler.
    func add(_ task: UInt32, _ expired: @escaping @MainActor @Sendable (UInt32) -> Void) { handlers[task] = expired }

    /// Task `task` ended.
    func remove(_ task: UInt32) { handlers[task] = nil }

    /// A `taskExpired` frame: the task's handler runs here, once. A task ended meanwhile has none.
    func expire(_ frame: Frame) throws(WireError) {
        var r = frame.reader
        _ = try r.u32("service")
        let task = try r.u32("task")
        try r.finish("task expired")
        handlers.removeValue(forKey: task)?(task)
    }
}
