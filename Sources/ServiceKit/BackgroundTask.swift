import ServiceABI

/// A background task: work the service must finish once in the background (a save), as
/// UIKit's `beginBackgroundTask(withName:expirationHandler:)`. While it is open the host keeps
/// the machine from sleeping; when its time is up the host calls its expiration handler on the
/// main thread, and ends it afterwards if the handler did not.
///
/// Open one with ``HostContext/beginBackgroundTask(_:expirationHandler:)``, end it with
/// ``end()``. Main thread only (the host's event thread).
public final class BackgroundTask: @unchecked Sendable {
    // @unchecked: used on the main thread only, as background_tasks.h's members are.
    /// The host's id of the task (never 0).
    public private(set) var id: UInt32 = 0
    /// The name it was opened with.
    public let name: String
    /// Whether it is still open: not ended by ``end()``, nor expired.
    public private(set) var isOpen = false
    private let table: UnsafePointer<sh_background_tasks>
    private let host: UnsafePointer<sh_host>
    private let expirationHandler: (BackgroundTask) -> Void

    fileprivate init(
        name: String, table: UnsafePointer<sh_background_tasks>, host: UnsafePointer<sh_host>,
        expirationHandler: @escaping (BackgroundTask) -> Void
    ) {
        self.name = name
        self.table = table
        self.host = host
        self.expirationHandler = expirationHandler
    }

    /// Ends the task (UIKit's `endBackgroundTask`); ending it again does nothing.
    public func end() {
        guard isOpen else { return }
        isOpen = false
        _ = table.pointee.end?(host, id)
        // The host no longer calls the handler: the reference it held goes.
        Unmanaged.passUnretained(self).release()
    }

    fileprivate func open() -> Bool {
        guard let begin = table.pointee.begin else { return false }
        // The host holds the task (its context) until it ends or expires.
        let context = Unmanaged.passRetained(self).toOpaque()
        id = begin(
            host, name,
            { context, _ in
                let task = Unmanaged<BackgroundTask>.fromOpaque(context!).takeUnretainedValue()
                task.expired()
            }, context)
        guard id != SH_BACKGROUND_TASK_INVALID else {
            Unmanaged.passUnretained(self).release()
            return false
        }
        isOpen = true
        return true
    }

    private func expired() {
        guard isOpen else { return }
        expirationHandler(self)
        // The host ends a task its handler left open.
        end()
    }
}

extension HostContext {
    /// Opens a background task named `name` (UIKit's `beginBackgroundTask(withName:expirationHandler:)`):
    /// `expirationHandler` runs on the main thread if the task is still open when its time is up
    /// (the machine is about to sleep); it should stop the work and end the task. Main thread only.
    /// - Throws: ``HostError/notAttached`` before attach, ``HostError/invalid`` for an empty name,
    ///   ``HostError/unsupported`` when the host does not offer background tasks (an older
    ///   host). In a worker process the handler runs once the host's expiry reaches the worker,
    ///   after the host ended the task.
    public func beginBackgroundTask(
        _ name: String, expirationHandler: @escaping (BackgroundTask) -> Void
    ) throws(HostError) -> BackgroundTask {
        let raw = try attached()
        guard !name.isEmpty, !name.utf8.contains(0) else { throw .invalid }
        guard let pointer = self.extension(id: SH_BACKGROUND_TASKS_ID) else { throw .unsupported }
        let table = pointer.assumingMemoryBound(to: sh_background_tasks.self)
        guard table.pointee.size >= SH_BACKGROUND_TASKS_SIZE_V1 else { throw .unsupported }
        let task = BackgroundTask(name: name, table: table, host: raw, expirationHandler: expirationHandler)
        guard task.open() else { throw .unsupported }
        return task
    }
}
