import Dispatch
import Glibc

/// The start of a `host` run, step by step in the order the executable takes them: the launch
/// request and the trace, the state directory and its first-launch marks, the host, crash and
/// hang isolation (the sentinel), systemd, the load, signal handling, the control socket,
/// metrics, the launch and the ready line. ``start()`` stops at the first step that cannot go
/// on, having logged why; ``StartedHost/serve()`` then runs the main loop.
///
/// The executable calls it after ``ShutdownCoordinator/catchSignals()``; a test calls it in
/// process with `handlesSignals: false` and reads the log it passed.
@MainActor
public final class HostStartup {
    /// The parsed command line.
    public let options: RunOptions
    /// Where the start and the host log.
    public let log: Log
    /// Whether SIGTERM, SIGINT and SIGHUP are handled (the signal thread); a test's process keeps its own.
    private let handlesSignals: Bool
    /// The host, once built. It and the parts below live as long as the start, even one that
    /// stopped: the executable then exits, as it always did, without tearing anything down.
    public private(set) var host: Host?
    /// The control socket, once bound.
    public private(set) var server: ControlServer?
    private var coordinator: ShutdownCoordinator?
    private var metrics: MetricsServer?
    /// The system sources, kept for the run's lifetime.
    public let sources = SystemSources()
    /// The configuration's desktop notifications (the notifications source's settings).
    private var notifications = DesktopNotificationSettings()
    /// The configuration's `sources` (`--source` wins).
    private var configuredSources: [String: Bool] = [:]

    /// A start from `options`, logging to `log` (by default the log the options ask for, with
    /// `host ctl watch` clients).
    public init(_ options: RunOptions, log: Log? = nil, handlesSignals: Bool = true) {
        self.options = options
        self.handlesSignals = handlesSignals
        self.log =
            log
            ?? Log(
                level: options.logLevel, format: options.logFormat, time: options.logTime ?? .default(),
                watchers: WatchHub())
    }

    /// Runs every step up to the ready line (the app launched, the control socket bound but
    /// not yet accepting); throws at the first step that cannot go on, after logging it.
    public func start() throws(StartupError) -> StartedHost {
        let options = options
        let log = log
        let request = try launchRequest()
        let trace: TraceWriter
        do { trace = try TraceWriter(path: options.traceFile, watchers: log.watchers) } catch {
            throw stop(
                "cannot write the trace: \(error)", event: .hostTraceFailed, .string("path", error.path),
                .int("errno", Int(error.errno)))
        }
        let (stateDirectory, firstLaunch) = try openStateDirectory()
        let host = Host(
            log: log, trace: trace, stateDirectory: stateDirectory, firstLaunch: firstLaunch,
            notificationAuthorization: options.notificationAuthorization)
        self.host = host
        host.answerTimeout = options.fetchTimeout
        host.requestTimeout = options.requestTimeout
        if options.statistics { host.enableStatistics() }
        if options.pluginSource != "--plugins" {
            log.info(
                "host",
                "plugin directories from \(options.pluginSource): \(options.pluginDirectories.joined(separator: ":"))",
                event: .pluginsDefault, .strings("directories", options.pluginDirectories))
        }
        // Crash and hang isolation (issue 5), before loading: where each plugin runs depends on it.
        // Per-service policies come from the configuration file (its errors are reported by load).
        // The file is read once: the load takes what was read here.
        // A deployed generation recorded as current replaces the plugin directories (Host+Deploy).
        host.deployment.keepGenerations = options.keepGenerations
        var loadSettings = host.resumingGeneration(options.loadSettings)
        loadSettings.configurationRead = LoadPlanner.readConfiguration(loadSettings)
        var isolation = IsolationSettings(options.isolation, stateDirectory: stateDirectory.path)
        if case .success(let configuration)? = loadSettings.configurationRead?.configuration {
            isolation.adopt(configuration)
            notifications = configuration.notifications
            configuredSources = configuration.sources
        }
        do { try host.startIsolation(isolation) } catch { throw threadFailure(error) }
        do {
            host.notifier = try SystemdNotifier.fromEnvironment()
        } catch {
            log.warn("host", "NOTIFY_SOCKET is set but unusable: \(error)", event: .systemdUnusable)
        }
        try load(host, loadSettings, stateDirectory: stateDirectory)
        let coordinator = shutdownCoordinator(host)
        self.coordinator = coordinator
        if handlesSignals {
            do { try coordinator.install() } catch { throw threadFailure(error) }
        }
        let server = try bindControlSocket(host, coordinator: coordinator, stateDirectory: stateDirectory)
        self.server = server
        let metrics = try startMetrics(host)
        self.metrics = metrics
        // Asked while the app launches, a source's current state waits for the sources' start.
        host.application.desk.awaitedHostAnswers = SystemSources.stateRequests
        try launch(host, request)
        let watchdog = StartedHost.startWatchdog(host)
        // Joined by hand: `joined(separator:)` ran unspecialized here, and its runtime conformance
        // lookups (a scan of every conformance record) were a measurable part of the fixed start.
        var ids = ""
        for service in host.services { ids += (ids.isEmpty ? "" : ", ") + service.id }
        log.info(
            "host",
            "\(host.state.name) with \(host.services.count) service(s): " + ids
                + (host.dormantCount > 0 ? " (and \(host.dormantCount) lazy, not loaded)" : "")
                + "; control socket \(server.path)",
            event: .hostReady,
            .string("state", host.state.name), .strings("services", host.services.map(\.id)),
            .int("lazy", host.dormantCount),
            .string("control", server.path))
        return StartedHost(
            host: host, server: server, firstLaunch: firstLaunch, keptAlive: (watchdog, metrics),
            startSources: { [self] in startSources(host, coordinator: coordinator) })
    }

    // MARK: The steps

    /// What the app is launched with, from --launch-notification, --launch-url,
    /// --launch-activity, --launch-scene.
    private func launchRequest() throws(StartupError) -> LaunchRequest {
        var request = LaunchRequest()
        do throws(InputError) {
            if let file = options.launchNotificationFile {
                // The limit of a push through the control channel holds for a launch push too.
                let bytes: [UInt8]
                do { bytes = try InputFile.read(file, limit: options.maxPayload) } catch {
                    throw InputError("--launch-notification: \(error)")
                }
                do { request.notification = try PushPayload(parsing: bytes) } catch {
                    throw InputError("--launch-notification \(file): \(error.message)")
                }
            }
            if let url = options.launchURL { request.url = try OpenURLInput(url) }
            request.shortcut = options.launchShortcut
            if let activity = options.launchActivity {
                request.activity = try UserActivityInput(type: activity.type, webpageURL: activity.url)
            }
            if let scene = options.launchScene {
                do { request.scene = try SceneRequest(name: scene.name, role: scene.role) } catch {
                    throw InputError("--launch-scene: \(error.message)")
                }
            }
            request.state = options.launchState
            try request.validate()
        } catch {
            throw .launchOptions(error.message)
        }
        return request
    }

    /// The state directory and its first-launch marks.
    private func openStateDirectory() throws(StartupError) -> (StateDirectory, FirstLaunch) {
        do throws(StorageError) {
            // Not `??`: its autoclosure would lose the error's type (and with it the path and errno).
            let path: String
            if let given = options.stateDirectory { path = given } else { path = try StateDirectory.defaultPath() }
            let stateDirectory = try StateDirectory(path: path, allowInsecure: options.allowInsecurePlugins)
            return (stateDirectory, try FirstLaunch(mode: options.firstLaunch, stateDirectory: stateDirectory))
        } catch {
            throw stateDirectoryFailure(error)
        }
    }

    /// The state directory cannot be used: said with its path and errno (0 when no system
    /// call failed). A function of its own: inline, the release build's optimizer (Swift
    /// 6.3.1, CopyPropagation) crashed on reading the typed error's fields.
    private func stateDirectoryFailure(_ error: StorageError) -> StartupError {
        let errno = error.errno ?? 0
        return stop(
            "state directory: \(error)", event: .hostStateDirectoryFailed, .string("path", error.path),
            .int("errno", Int(errno)))
    }

    /// Loads the services; a host with no service, running or lazy, says so.
    private func load(_ host: Host, _ settings: LoadSettings, stateDirectory: StateDirectory) throws(StartupError) {
        var settings = settings
        if options.registryCache { settings.registry = RegistryCache(stateDirectory: stateDirectory, log: log) }
        do {
            try host.load(settings)
        } catch {
            // The key at fault as a field of its own, so a tool need not parse the message.
            guard let key = error.key else { throw stop("\(error)", event: .hostLoadFailed) }
            throw stop("\(error)", event: .hostLoadFailed, .string("key", key))
        }
        if let counts = settings.registry?.takeCounts() {
            log.debug(
                "host", "registry cache: \(counts.cached) file(s) from the cache, \(counts.read) read",
                event: .registryUsed,
                .int("cached", counts.cached), .int("read", counts.read))
        }
        // Lazy services waiting for their first event are services too: only a host with neither warns.
        if host.services.isEmpty && host.dormantCount == 0 {
            log.warn("host", "no services loaded; running with none", event: .hostNoServices)
        }
    }

    /// SIGHUP reloads; SIGTERM and SIGINT terminate and exit 0. Installed before launch, so a
    /// signal during launch waits for it and then shuts down.
    private func shutdownCoordinator(_ host: Host) -> ShutdownCoordinator {
        let shutdownTimeout = options.shutdownTimeout
        let log = log
        return ShutdownCoordinator(
            timeout: shutdownTimeout, tracker: host.tracker, log: log,
            hangup: {
                MainActor.assumeIsolated {
                    host.log.info("host", "SIGHUP received: reloading", event: .reloadRequested)
                    do { _ = try host.reload() } catch {
                        host.log.error("host", "reload failed, nothing changed: \(error)", event: .reloadFailed)
                    }
                }
            },
            shutdown: {
                MainActor.assumeIsolated { Self.shutDown(host, log: log, timeout: shutdownTimeout) }
            })
    }

    /// The orderly end: the app to the background (willResignActive, didEnterBackground); once
    /// every background task a service opened there ended (or expired, at a quarter of the
    /// shutdown timeout), willTerminate, the replies flushed, exit 0. The main loop serves on
    /// meanwhile, so a task can finish.
    private static func shutDown(_ host: Host, log: Log, timeout: Double) {
        if host.state == .active || host.state == .inactive { try? host.transition(to: .background) }
        let tasks = host.backgroundTasks
        if !tasks.tasks.isEmpty {
            DispatchQueue.main.asyncAfter(deadline: .now() + timeout / 4) {
                MainActor.assumeIsolated { tasks.expire(reason: "the host is terminating") }
            }
        }
        tasks.whenAllEnded { finishShutdown(host, log: log, timeout: timeout) }
    }

    private static func finishShutdown(_ host: Host, log: Log, timeout: Double) -> Never {
        try? host.terminate()
        host.isolation?.endSandboxedWorkers()
        // Replies already produced (a request carried out just before the signal) reach
        // their clients; one that does not read costs at most half the shutdown timeout.
        ControlServer.flushReplies(within: timeout / 2)
        log.info("host", "terminated cleanly", event: .hostTerminated)
        exit(0)
    }

    /// The system sources (sleep and wake…), after the launch: each says on or off, once.
    private func startSources(_ host: Host, coordinator: ShutdownCoordinator) {
        let shutdownTimeout = options.shutdownTimeout
        let log = log
        // A system shutdown ends as SIGTERM does, with the same deadline.
        let driver = AppDriver(host: host) {
            coordinator.armDeadline()
            Self.shutDown(host, log: log, timeout: shutdownTimeout)
        }
        let switches = configuredSources.merging(options.sources) { $1 }
        sources.start(
            SystemSources.builtIn(memory: options.memoryPressure, notifications: notifications, switches: switches),
            driver: driver, switches: options.sources, configured: configuredSources)
    }

    /// Bound before launch: requests made while the app launches wait, in order, until it is active.
    private func bindControlSocket(
        _ host: Host, coordinator: ShutdownCoordinator, stateDirectory: StateDirectory
    ) throws(StartupError) -> ControlServer {
        let controlPath =
            options.controlPath
            ?? ((try? ControlPaths.defaultSocket(stateDirectory: stateDirectory.path))
                ?? stateDirectory.path + "/host.sock")
        do {
            return try ControlServer(
                path: controlPath, maxPayload: options.maxPayload, shutdownTimeout: options.shutdownTimeout, log: log,
                handler: ControlHandler(
                    host: host, maxPayload: options.maxPayload, willTerminate: coordinator.armDeadline))
        } catch {
            throw stop("\(error)", event: .controlUnavailable, .string("path", controlPath))
        }
    }

    /// `--metrics-listen`: the metrics endpoint, said where it listens (and warned about when
    /// other machines reach it).
    private func startMetrics(_ host: Host) throws(StartupError) -> MetricsServer? {
        guard let address = options.metricsListen else { return nil }
        let metrics: MetricsServer
        do { metrics = try MetricsServer(address: address, host: host) } catch {
            throw stop("\(error)", event: .metricsUnavailable)
        }
        log.info(
            "host", "metrics on http://\(metrics.address)/metrics", event: .metricsListening,
            .string("address", "\(metrics.address)"))
        if !address.isLoopback {
            log.warn(
                "host", "--metrics-listen \(address) is reachable from other machines: the figures name every service",
                event: .metricsExposed, .string("address", "\(address)"))
        }
        return metrics
    }

    /// Launches; a `policy: required` service that failed stops the start, the others taken
    /// down in reverse. A launch refused otherwise is logged and the host serves on.
    private func launch(_ host: Host, _ request: LaunchRequest) throws(StartupError) {
        let failedRequired: [String]
        do { failedRequired = try host.launch(request) } catch {
            log.error("host", error.description, event: .hostLaunchFailed)
            return
        }
        guard failedRequired.isEmpty else {
            // The launch stopped before anyone became active; those that launched go down in reverse.
            log.error(
                "host", "required service(s) failed to launch: \(failedRequired.joined(separator: ", ")); stopping",
                event: .hostRequiredFailed, .strings("services", failedRequired))
            try? host.terminate()
            throw .logged(event: .hostRequiredFailed)
        }
    }

    /// A thread the host cannot run without (the signal thread, the hang watchdog's) could not
    /// be started: said with its cause, before any service is loaded or launched.
    private func threadFailure(_ error: SystemError) -> StartupError {
        stop(
            "cannot start the \(error.path): \(error.reason) (\(error.operation); a limit on threads or processes:"
                + " ulimit -u, or the cgroup's pids.max)",
            event: .hostThreadFailed, .string("thread", error.path), .int("errno", Int(error.errno)))
    }

    /// Logs `message` as an error with `event` and returns the start's end.
    private func stop(_ message: String, event: LogEvent, _ fields: LogField...) -> StartupError {
        log.write(.error, "host", message, event: event, fields: fields)
        return .logged(event: event)
    }
}
