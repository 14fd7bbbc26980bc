import ServiceABI

/// What crash and hang isolation may ask of the host, and nothing more: isolation never
/// reaches into the dispatcher or the service list.
@MainActor
protocol IsolationHost: AnyObject {
    /// Whether the app runs and takes events (launched, not terminating): a worker that dies
    /// otherwise is not restarted.
    var isRunning: Bool { get }
    /// The app's state, for log lines.
    var state: AppState { get }
    /// How long services may take to complete an answer (workers wait a little longer).
    var answerTimeout: Double { get }
    /// The time restarts and file watching run on.
    var clock: HostClock { get }
    /// Brings the running services behind `descriptors` (a restarted worker's) to the app's
    /// state through the host's one catch-up.
    func catchUp(_ descriptors: [UnsafePointer<sh_service>])
    /// The services' background tasks: a dead worker's are ended, as nothing else will end them.
    var backgroundTasks: BackgroundTasks { get }
    /// Records a crash of the running service `id` (`message` as its last error, for `ctl list`;
    /// `cause` as `worker.crashed` gives it): a deploy in probation rolls back.
    func noteCrash(of id: String, _ message: String, cause: String)
}
