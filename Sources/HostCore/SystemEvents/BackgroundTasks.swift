import Dispatch

/// UIKit's background tasks (`beginBackgroundTask(withName:expirationHandler:)`): work a
/// service must finish once in the background. While one is open the sleep source keeps its
/// inhibitor; when a source's time is up (``expire(reason:)``) each open task's expiration
/// handler runs on the main thread, and tasks still open afterwards are ended with a
/// `backgroundTask.expired` line naming the service.
@MainActor
public final class BackgroundTasks {
    /// An open task.
    public struct Task: Sendable {
        /// Its identifier, never 0 (UIKit's `UIBackgroundTaskIdentifier.invalid`).
        public let id: UInt32
        /// The service that opened it.
        public let service: String
        /// The name it was opened with.
        public let name: String
    }

    private let log: Log
    private var open: [UInt32: (task: Task, expiration: () -> Void)] = [:]
    private var nextID: UInt32 = 1
    private var waiters: [() -> Void] = []

    init(log: Log) { self.log = log }

    /// The open tasks, oldest first.
    public var tasks: [Task] { open.values.map(\.task).sorted { $0.id < $1.id } }

    /// Opens a task for `service`; `expiration` runs on the main thread when its time is up.
    public func begin(service: String, name: String, expiration: @escaping () -> Void) -> UInt32 {
        let id = nextID
        nextID = nextID == UInt32.max ? 1 : nextID + 1
        open[id] = (Task(id: id, service: service, name: name), expiration)
        return id
    }

    /// Ends task `id` (of `service`, when given); false when it is not open (ended already,
    /// or never begun by that service).
    @discardableResult
    public func end(_ id: UInt32, service: String? = nil) -> Bool {
        guard let entry = open[id], service == nil || entry.task.service == service else { return false }
        open[id] = nil
        if open.isEmpty { wake() }
        return true
    }

    /// Runs `body` once no task is open (now, when none is; else from the main queue).
    public func whenAllEnded(_ body: @escaping () -> Void) {
        if open.isEmpty { body() } else { waiters.append(body) }
    }

    /// Time is up: each open task's expiration handler, then tasks still open are ended and logged.
    public func expire(reason: String) {
        for (task, expiration) in open.values.sorted(by: { $0.task.id < $1.task.id }) {
            guard open[task.id] != nil else { continue }
            expiration()
        }
        for (task, _) in open.values.sorted(by: { $0.task.id < $1.task.id }) {
            log.warn(
                "host",
                "background task \(task.name) of \(task.service) was not ended after its expiration handler (\(reason));"
                    + " ended",
                event: .backgroundTaskExpired, .string("service", task.service), .string("task", task.name),
                .string("reason", reason))
            open[task.id] = nil
        }
        wake()
    }

    /// Ends every open task of `services` (their worker died: nothing will end them), each
    /// logged as `backgroundTask.expired` with `reason`.
    public func endAll(of services: [String], reason: String) {
        let ending = open.values.map(\.task).filter { services.contains($0.service) }.sorted { $0.id < $1.id }
        guard !ending.isEmpty else { return }
        for task in ending {
            log.warn(
                "host", "background task \(task.name) of \(task.service) ended: \(reason)",
                event: .backgroundTaskExpired,
                .string("service", task.service), .string("task", task.name), .string("reason", reason))
            open[task.id] = nil
        }
        if open.isEmpty { wake() }
    }

    /// Runs the waiters from the main queue, after the current call: a task usually ends inside a
    /// service's call, and what waits (willTerminate, the inhibitor's release) must not run inside it.
    private func wake() {
        let ready = waiters
        waiters = []
        guard !ready.isEmpty else { return }
        DispatchQueue.main.async { MainActor.assumeIsolated { for body in ready { body() } } }
    }
}
