/// What a host log line says happened, for machines: the `event` of a `--log-format json` line
/// (`worker.crashed`), and the names of the `fields` such a line carries.
///
/// This is the one list of log events. The host writes them (`Log`), the end-to-end tests look
/// for them by case (`LogRecord`), and `LogEventTableTests` holds the reference's table of
/// log events against it. Names and field names are stable: never rename one; messages are
/// for people and may change. A plugin does not link the host: its own names stay its own.
public enum LogEvent: String, CaseIterable, Sendable {
    case authorizationChanged = "authorization.changed"
    case authorizationSaveFailed = "authorization.saveFailed"
    case authorizationUnreadable = "authorization.unreadable"
    case backgroundTaskExpired = "backgroundTask.expired"
    case completionLate = "completion.late"
    case completionStale = "completion.stale"
    case completionTimeout = "completion.timeout"
    case completionTwice = "completion.twice"
    case controlDropped = "control.dropped"
    case controlOverloaded = "control.overloaded"
    case controlUnavailable = "control.unavailable"
    case controlUnwatched = "control.unwatched"
    case copiesStoreFallback = "copies.storeFallback"
    case copiesStoreRefused = "copies.storeRefused"
    case deployApplied = "deploy.applied"
    case deployPruned = "deploy.pruned"
    case deployRefused = "deploy.refused"
    case deployResumed = "deploy.resumed"
    case deployRolledBack = "deploy.rolledBack"
    case deployStep = "deploy.step"
    case desktopNotificationFailed = "desktopNotification.failed"
    case desktopNotificationResponse = "desktopNotification.response"
    case desktopNotificationShown = "desktopNotification.shown"
    case eventAnsweredFalse = "event.answeredFalse"
    case eventFailed = "event.failed"
    case firstLaunchUnreadable = "firstLaunch.unreadable"
    case firstLaunchUnrecorded = "firstLaunch.unrecorded"
    case healthChanged = "health.changed"
    case healthUnhealthy = "health.unhealthy"
    case hostForcedExit = "host.forcedExit"
    case hostLaunchFailed = "host.launchFailed"
    case hostLoadFailed = "host.loadFailed"
    case hostMainLoopFailed = "host.mainLoopFailed"
    case hostNoServices = "host.noServices"
    case hostReady = "host.ready"
    case hostRequiredFailed = "host.requiredFailed"
    case hostShuttingDown = "host.shuttingDown"
    case hostStateDirectoryFailed = "host.stateDirectoryFailed"
    case hostTerminated = "host.terminated"
    case hostThreadFailed = "host.threadFailed"
    case hostTraceFailed = "host.traceFailed"
    case inhibitorFailed = "inhibitor.failed"
    case inhibitorReleased = "inhibitor.released"
    case inhibitorTaken = "inhibitor.taken"
    case launchSceneFailed = "launch.sceneFailed"
    case launchUnhandled = "launch.unhandled"
    case loadFailed = "load.failed"
    case loadSkipped = "load.skipped"
    case memoryPressure = "memory.pressure"
    case metricsExposed = "metrics.exposed"
    case metricsListening = "metrics.listening"
    case metricsUnavailable = "metrics.unavailable"
    case notificationInvalidJSON = "notification.invalidJSON"
    case notificationCategoriesRefused = "notificationCategories.refused"
    case notificationCategoriesSet = "notificationCategories.set"
    case pluginsDefault = "plugins.default"
    case pushNotBroughtForward = "push.notBroughtForward"
    case registryChanged = "registry.changed"
    case registryRebuilt = "registry.rebuilt"
    case registryUnwritable = "registry.unwritable"
    case registryUsed = "registry.used"
    case reloadDone = "reload.done"
    case reloadFailed = "reload.failed"
    case reloadRequested = "reload.requested"
    case reloadRestartNeeded = "reload.restartNeeded"
    case reloadStateHandedOver = "reload.stateHandedOver"
    case reloadStateRefused = "reload.stateRefused"
    case requestConflict = "request.conflict"
    case requestFailed = "request.failed"
    case requestRefused = "request.refused"
    case routeUnclaimed = "route.unclaimed"
    case safeModeOn = "safeMode.on"
    case safeModeSkipped = "safeMode.skipped"
    case sandboxIgnored = "sandbox.ignored"
    case sandboxRefused = "sandbox.refused"
    case sandboxUnavailable = "sandbox.unavailable"
    case sceneConfigurationRefused = "scene.configurationRefused"
    case sceneConnected = "scene.connected"
    case sceneDisconnected = "scene.disconnected"
    case sceneRestorationFailed = "scene.restorationFailed"
    case sceneRestorationRefused = "scene.restorationRefused"
    case sceneRestorationUnreadable = "scene.restorationUnreadable"
    case sentinelUnavailable = "sentinel.unavailable"
    case sentinelUncleanExit = "sentinel.uncleanExit"
    case serviceActivated = "service.activated"
    case serviceDisabled = "service.disabled"
    case serviceLazyRefused = "service.lazyRefused"
    case serviceLoadedByRequest = "service.loadedByRequest"
    case serviceMissing = "service.missing"
    case serviceNotConfigured = "service.notConfigured"
    case serviceRequirementFailed = "service.requirementFailed"
    case serviceSettingsChanged = "service.settingsChanged"
    case serviceSettingsRefused = "service.settingsRefused"
    case serviceStartedByRequest = "service.startedByRequest"
    case serviceStopped = "service.stopped"
    case serviceStoppedByRequest = "service.stoppedByRequest"
    case serviceStuck = "service.stuck"
    case networkChanged = "network.changed"
    case networkFailed = "network.failed"
    case powerChanged = "power.changed"
    case sessionActive = "session.active"
    case sessionLock = "session.lock"
    case sourceOff = "source.off"
    case sourceOn = "source.on"
    case systemdUnusable = "systemd.unusable"
    case systemShutdown = "system.shutdown"
    case systemSleep = "system.sleep"
    case timeChanged = "time.changed"
    case timeFailed = "time.failed"
    case watchDropped = "watch.dropped"
    case workerBlocked = "worker.blocked"
    case workerCrashed = "worker.crashed"
    case workerFailed = "worker.failed"
    case workerFileChanged = "worker.fileChanged"
    case workerOutput = "worker.output"
    case workerOutputDropped = "worker.outputDropped"
    case workerOutputThrottled = "worker.outputThrottled"
    case workerRearmed = "worker.rearmed"
    case workerResetFailed = "worker.resetFailed"
    case workerRestarted = "worker.restarted"
    case workerRetired = "worker.retired"
    case workerStalled = "worker.stalled"
    case workerStopped = "worker.stopped"

    /// The name a line carries in its `event`.
    public var name: String { rawValue }

    /// The names of the fields a line of this event may carry; a line leaves out those that do
    /// not apply (`worker.crashed` has `signal` or `status`, not both).
    public var fields: [String] {
        switch self {
        case .authorizationChanged: ["status"]
        case .authorizationSaveFailed: ["path", "errno"]
        case .authorizationUnreadable: ["path", "reason"]
        case .backgroundTaskExpired: ["service", "task", "reason"]
        case .completionLate: ["event"]
        case .completionStale: []
        case .completionTimeout: ["event", "deadline"]
        case .completionTwice: ["event"]
        case .controlDropped: ["bytes"]
        case .controlOverloaded: ["reason", "limit"]
        case .controlUnavailable: ["path"]
        case .controlUnwatched: ["operation", "errno"]
        case .copiesStoreFallback: ["path", "to", "reason", "errno"]
        case .copiesStoreRefused: ["path", "reason"]
        case .deployApplied: ["generation", "directory", "probation"]
        case .deployPruned: ["removed", "kept", "error"]
        case .deployRefused: ["directory", "reason"]
        case .deployResumed: ["generation", "directory", "reason", "rejected", "discarded"]
        case .deployRolledBack: ["generation", "reason", "to", "service", "error"]
        case .deployStep: ["generation", "step"]
        case .desktopNotificationFailed: ["reason"]
        case .desktopNotificationResponse: ["id", "action"]
        case .desktopNotificationShown: ["id", "summary", "body", "actions", "sound"]
        case .eventAnsweredFalse: ["event"]
        case .eventFailed: ["event", "result"]
        case .firstLaunchUnreadable: []
        case .firstLaunchUnrecorded: ["services", "path", "errno"]
        case .healthChanged: ["service", "status", "was", "reason"]
        case .healthUnhealthy: ["service", "checks", "reason", "action"]
        case .hostForcedExit: ["cause", "signal", "deadline", "service", "event"]
        case .hostLaunchFailed: []
        case .hostLoadFailed: ["key"]
        case .hostMainLoopFailed: []
        case .hostNoServices: []
        case .hostReady: ["state", "services", "lazy", "control"]
        case .hostRequiredFailed: ["services"]
        case .hostShuttingDown: ["by"]
        case .hostStateDirectoryFailed: ["path", "errno"]
        case .hostTerminated: []
        case .hostThreadFailed: ["thread", "errno"]
        case .hostTraceFailed: ["path", "errno"]
        case .inhibitorFailed: ["reason"]
        case .inhibitorReleased: ["reason"]
        case .inhibitorTaken: ["what", "delayMaxUSec"]
        case .launchSceneFailed: ["scene"]
        case .launchUnhandled: ["what"]
        case .loadFailed: ["path", "reason"]
        case .loadSkipped: ["path", "reason"]
        case .memoryPressure: ["warned"]
        case .metricsExposed: ["address"]
        case .metricsListening: ["address"]
        case .metricsUnavailable: []
        case .notificationInvalidJSON: ["name", "reason"]
        case .notificationCategoriesRefused: ["service", "reason"]
        case .notificationCategoriesSet: ["service", "categories"]
        case .pluginsDefault: ["directories"]
        case .pushNotBroughtForward: ["reason"]
        case .registryChanged: ["path"]
        case .registryRebuilt: ["path", "reason"]
        case .registryUnwritable: ["path", "reason"]
        case .registryUsed: ["cached", "read"]
        case .reloadDone: ["added", "removed", "replaced", "reconfigured"]
        case .reloadFailed: []
        case .reloadRequested: []
        case .reloadRestartNeeded: ["service", "keys"]
        case .reloadStateHandedOver: ["service", "bytes", "version"]
        case .reloadStateRefused: ["service", "bytes", "limit", "reason"]
        case .requestConflict: ["service", "name", "answerer"]
        case .requestFailed: ["name", "from", "reason"]
        case .requestRefused: ["name", "reason", "answerer"]
        case .routeUnclaimed: ["event", "what"]
        case .safeModeOn: []
        case .safeModeSkipped: ["path", "services"]
        case .sandboxIgnored: ["service"]
        case .sandboxRefused: ["services", "syscall"]
        case .sandboxUnavailable: ["services", "limits", "reason"]
        case .sceneConfigurationRefused: ["scene"]
        case .sceneConnected: ["scene", "role", "configuration"]
        case .sceneDisconnected: ["scene"]
        case .sceneRestorationFailed: ["scene", "path", "errno"]
        case .sceneRestorationRefused: ["scene", "reason"]
        case .sceneRestorationUnreadable: ["scene", "path", "reason"]
        case .sentinelUnavailable: []
        case .sentinelUncleanExit: ["pid", "started", "service", "event", "loading"]
        case .serviceActivated: ["service", "trigger"]
        case .serviceDisabled: ["service"]
        case .serviceLazyRefused: ["service", "reason", "requiredBy"]
        case .serviceLoadedByRequest: ["service", "path"]
        case .serviceMissing: ["service"]
        case .serviceNotConfigured: ["service"]
        case .serviceRequirementFailed: ["service", "requires"]
        case .serviceSettingsChanged: ["service", "result"]
        case .serviceSettingsRefused: ["service", "key", "reason", "kept"]
        case .serviceStartedByRequest: ["service"]
        case .serviceStopped: ["reason"]
        case .serviceStoppedByRequest: ["service"]
        case .serviceStuck: ["service", "event"]
        case .networkChanged: ["online", "interface"]
        case .networkFailed: ["reason"]
        case .powerChanged: ["onBattery", "low", "percentage"]
        case .sessionActive: ["active"]
        case .sessionLock: ["locked"]
        case .sourceOff: ["source", "reason"]
        case .sourceOn: ["source", "reason"]
        case .systemdUnusable: []
        case .systemShutdown: []
        case .systemSleep: ["sleeping"]
        case .timeChanged: ["reason"]
        case .timeFailed: ["reason"]
        case .watchDropped: ["bytes"]
        case .workerBlocked: ["services", "path", "resetAt"]
        case .workerCrashed:
            ["services", "reason", "cause", "signal", "status", "event", "limit", "memoryMax", "pid", "restart"]
        case .workerFailed:
            [
                "services", "reason", "cause", "signal", "status", "event", "limit", "memoryMax", "pid", "path",
                "records",
                "record", "resetAt",
            ]
        case .workerFileChanged: ["services", "path"]
        case .workerOutput: ["line"]
        case .workerOutputDropped: ["lines"]
        case .workerOutputThrottled: ["budget", "window"]
        case .workerRearmed: ["services", "path", "after"]
        case .workerResetFailed: ["services", "path"]
        case .workerRestarted: ["services", "pid"]
        case .workerRetired: ["services", "path", "pid"]
        case .workerStalled: ["services", "pid", "bound", "bytes", "seconds"]
        case .workerStopped: ["services", "path"]
        }
    }
}
