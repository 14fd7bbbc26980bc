// The `host` executable: parses the command line and hands over to HostCore.
import Dispatch
import Glibc
import HostCore
import ServiceJSON

/// Prints a usage error and exits 2; for `--help`, prints `help` and exits 0.
func usageFailure(_ error: UsageError, help: String) -> Never {
    if error.isHelp {
        print(help)
        exit(0)
    }
    failure("host: \(error.message)\nTry 'host --help'.", status: 2)
}

/// Prints `message` on stderr and exits with `status`.
func failure(_ message: String, status: Int32) -> Never {
    _ = (message + "\n").withCString { write(STDERR_FILENO, $0, strlen($0)) }
    exit(status)
}

/// Logs `message` as an error (in the log's format) and exits 2.
func fatal(_ log: Log, _ message: String, event: String, _ fields: LogField...) -> Never {
    log.write(.error, "host", message, event: event, fields: fields)
    exit(2)
}

/// The state directory cannot be used: said with its path and errno (0 when no system call
/// failed). A function of its own: inline in `run`, the release build's optimizer (Swift 6.3.1,
/// CopyPropagation) crashed on reading the typed error's fields.
func stateDirectoryFailure(_ log: Log, _ error: StorageError) -> Never {
    let errno = error.errno ?? 0
    fatal(log, "state directory: \(error)", event: "host.stateDirectoryFailed", .string("path", error.path), .int("errno", Int(errno)))
}

/// A thread the host cannot run without (the signal thread) could not be started: said with
/// its cause, before any service is loaded or launched.
func threadFailure(_ log: Log, _ error: SystemError) -> Never {
    fatal(
        log,
        "cannot start the \(error.path): \(error.reason) (\(error.operation); a limit on threads or processes:"
            + " ulimit -u, or the cgroup's pids.max)",
        event: "host.threadFailed", .string("thread", error.path), .int("errno", Int(error.errno)))
}

/// `host ctl …`: one request to a running host.
func runCtl(_ arguments: [String]) -> Never {
    let invocation: CtlCommand.Invocation
    do { invocation = try CtlCommand.parse(arguments, readInput: { try InputFile.read($0, limit: RunOptions.largestPayload) }) } catch { usageFailure(error, help: CtlCommand.help) }
    let path: String
    do { path = try invocation.control ?? ControlPaths.defaultSocket() } catch {
        failure("host ctl: no control socket: \(error) (pass --control PATH)", status: 1)
    }
    if invocation.streams { watch(invocation, path: path) }
    let raw: ServiceJSON.JSONValue
    do { raw = try ControlClient.send(invocation.message, to: path, timeout: invocation.timeout) } catch { failure("host ctl: \(error)", status: 1) }
    let reply = ControlReply(json: raw)
    let status = CtlCommand.status(of: reply)
    let text =
        invocation.json
        ? raw.serialized
        : CtlCommand.operateText(of: reply, command: invocation.message.command)
            ?? CtlCommand.text(of: reply, command: invocation.message.command.name)
    if status == 1 { failure("host ctl: \(text)", status: 1) }
    print(text)
    exit(status)
}

/// `host ctl watch`: every record as it comes, until the host goes away or Ctrl-C.
func watch(_ invocation: CtlCommand.Invocation, path: String) -> Never {
    var first = true
    do {
        try ControlClient.exchange(invocation.message, with: path, timeout: invocation.timeout) { value in
            defer { first = false }
            if first {
                // The reply that starts the stream: only an error is shown.
                if value["ok"]?.boolValue != true { failure("host ctl: \(ControlReply(json: value).error ?? value.serialized)", status: 1) }
                return true
            }
            print(invocation.json ? value.serialized : CtlCommand.watchText(value))
            fflush(nil)
            return true
        }
    } catch {
        failure("host ctl: \(error)", status: 1)
    }
    exit(0)
}

/// What the app is launched with, from --launch-notification, --launch-url, --launch-activity,
/// --launch-scene.
func launchRequest(_ options: RunOptions) -> LaunchRequest {
    var request = LaunchRequest()
    do throws(InputError) {
        if let file = options.launchNotificationFile {
            // The limit of a push through the control channel holds for a launch push too.
            let bytes: [UInt8]
            do { bytes = try InputFile.read(file, limit: options.maxPayload) } catch { throw InputError("--launch-notification: \(error)") }
            do { request.notification = try PushPayload(parsing: bytes) } catch {
                throw InputError("--launch-notification \(file): \(error.message)")
            }
        }
        if let url = options.launchURL { request.url = try OpenURLInput(url) }
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
        failure("host: \(error.message)", status: 2)
    }
    return request
}

/// `host --plugins DIR …`: load, launch, serve until terminated.
@MainActor
func run(_ options: RunOptions) -> Never {
    // First thing: from here on SIGTERM, SIGINT and SIGHUP are recorded, never lost.
    ShutdownCoordinator.catchSignals()
    HostClockStart.touch()
    let watchers = WatchHub()
    let log = Log(level: options.logLevel, format: options.logFormat, time: options.logTime ?? .default(), watchers: watchers)
    let request = launchRequest(options)
    let trace: TraceWriter
    do { trace = try TraceWriter(path: options.traceFile, watchers: watchers) } catch {
        fatal(log, "cannot write the trace: \(error)", event: "host.traceFailed", .string("path", error.path), .int("errno", Int(error.errno)))
    }
    let stateDirectory: StateDirectory
    let firstLaunch: FirstLaunch
    do throws(StorageError) {
        // Not `??`: its autoclosure would lose the error's type (and with it the path and errno).
        let path: String
        if let given = options.stateDirectory { path = given } else { path = try StateDirectory.defaultPath() }
        stateDirectory = try StateDirectory(path: path, allowInsecure: options.allowInsecurePlugins)
        firstLaunch = try FirstLaunch(mode: options.firstLaunch, stateDirectory: stateDirectory)
    } catch {
        stateDirectoryFailure(log, error)
    }
    let host = Host(
        log: log, trace: trace, stateDirectory: stateDirectory, firstLaunch: firstLaunch,
        notificationAuthorization: options.notificationAuthorization)
    host.answerTimeout = options.fetchTimeout
    host.requestTimeout = options.requestTimeout
    if options.statistics { host.enableStatistics() }
    if options.pluginSource != "--plugins" {
        log.info(
            "host", "plugin directories from \(options.pluginSource): \(options.pluginDirectories.joined(separator: ":"))",
            event: "plugins.default", .strings("directories", options.pluginDirectories))
    }
    // Crash and hang isolation (issue 5), before loading: where each plugin runs depends on it.
    // Per-service policies come from the configuration file (its errors are reported by load).
    // The file is read once: the load takes what was read here.
    var loadSettings = options.loadSettings
    loadSettings.configurationRead = LoadPlanner.readConfiguration(loadSettings)
    var isolation = IsolationSettings(options.isolation, stateDirectory: stateDirectory.path)
    if case .success(let configuration)? = loadSettings.configurationRead?.configuration {
        isolation.policies = IsolationSettings.policies(from: configuration)
    }
    do { try host.startIsolation(isolation) } catch { threadFailure(log, error) }
    do {
        host.notifier = try SystemdNotifier.fromEnvironment()
    } catch {
        log.warn("host", "NOTIFY_SOCKET is set but unusable: \(error)", event: "systemd.unusable")
    }
    if options.registryCache { loadSettings.registry = RegistryCache(stateDirectory: stateDirectory, log: log) }
    do {
        try host.load(loadSettings)
    } catch {
        fatal(log, "\(error)", event: "host.loadFailed")
    }
    if let counts = loadSettings.registry?.takeCounts() {
        log.debug(
            "host", "registry cache: \(counts.cached) file(s) from the cache, \(counts.read) read", event: "registry.used",
            .int("cached", counts.cached), .int("read", counts.read))
    }
    // Lazy services waiting for their first event are services too: only a host with neither warns.
    if host.services.isEmpty && host.dormantCount == 0 {
        log.warn("host", "no services loaded; running with none", event: "host.noServices")
    }

    // Installed before launch, so a signal during launch waits for it and then shuts down.
    let shutdownTimeout = options.shutdownTimeout
    let coordinator = ShutdownCoordinator(
        timeout: options.shutdownTimeout, tracker: host.tracker, log: log,
        hangup: {
            MainActor.assumeIsolated {
                host.log.info("host", "SIGHUP received: reloading", event: "reload.requested")
                do { _ = try host.reload() } catch {
                    host.log.error("host", "reload failed, nothing changed: \(error)", event: "reload.failed")
                }
            }
        },
        shutdown: {
            MainActor.assumeIsolated {
                try? host.terminate()
                // Replies already produced (a request carried out just before the signal) reach
                // their clients; one that does not read costs at most half the shutdown timeout.
                ControlServer.flushReplies(within: shutdownTimeout / 2)
                log.info("host", "terminated cleanly", event: "host.terminated")
                exit(0)
            }
        })
    do { try coordinator.install() } catch { threadFailure(log, error) }
    // Bound before launch: requests made while the app launches wait, in order, until it is active.
    let controlPath =
        options.controlPath
        ?? ((try? ControlPaths.defaultSocket(stateDirectory: stateDirectory.path))
            ?? stateDirectory.path + "/host.sock")
    let server: ControlServer
    do {
        server = try ControlServer(
            path: controlPath, maxPayload: options.maxPayload, shutdownTimeout: options.shutdownTimeout, log: log,
            handler: ControlHandler(host: host, maxPayload: options.maxPayload, willTerminate: coordinator.armDeadline))
    } catch {
        fatal(log, "\(error)", event: "control.unavailable", .string("path", controlPath))
    }
    var metrics: MetricsServer?
    if let address = options.metricsListen {
        do { metrics = try MetricsServer(address: address, host: host) } catch { fatal(log, "\(error)", event: "metrics.unavailable") }
        log.info(
            "host", "metrics on http://\(metrics!.address)/metrics", event: "metrics.listening",
            .string("address", "\(metrics!.address)"))
        if !address.isLoopback {
            log.warn(
                "host", "--metrics-listen \(address) is reachable from other machines: the figures name every service",
                event: "metrics.exposed", .string("address", "\(address)"))
        }
    }
    do {
        let failedRequired = try host.launch(request)
        if !failedRequired.isEmpty {
            // The launch stopped before anyone became active; those that launched go down in reverse.
            log.error(
                "host", "required service(s) failed to launch: \(failedRequired.joined(separator: ", ")); stopping",
                event: "host.requiredFailed", .strings("services", failedRequired))
            try? host.terminate()
            exit(2)
        }
    } catch {
        log.error("host", error.description, event: "host.launchFailed")
    }
    let watchdog = startWatchdog(host)
    // Joined by hand: `joined(separator:)` ran unspecialized here, and its runtime conformance
    // lookups (a scan of every conformance record) were a measurable part of the fixed start.
    var ids = ""
    for service in host.services { ids += (ids.isEmpty ? "" : ", ") + service.id }
    log.info(
        "host",
        "\(host.state.name) with \(host.services.count) service(s): " + ids
            + (host.dormantCount > 0 ? " (and \(host.dormantCount) lazy, not loaded)" : "") + "; control socket \(server.path)",
        event: "host.ready",
        .string("state", host.state.name), .strings("services", host.services.map(\.id)), .int("lazy", host.dormantCount),
        .string("control", server.path))
    server.startAccepting()
    // Housekeeping that nothing before `active` needs, off the main thread and queued only
    // after the line: queued before it, its new worker thread competed with the line's writing.
    DispatchQueue.global(qos: .utility).async { firstLaunch.removeInterruptedMarks() }
    let failure = withExtendedLifetime((watchdog, metrics)) { () -> SystemError in
        do throws(SystemError) { try MainLoop.shared.run() } catch { return error }
    }
    fatal(log, "\(failure)", event: "host.mainLoopFailed")
}

/// Pings systemd's watchdog at half its interval from the main queue, so a stuck main
/// thread stops the pings and systemd notices.
@MainActor
func startWatchdog(_ host: Host) -> DispatchSourceTimer? {
    guard let notifier = host.notifier, let interval = notifier.watchdogInterval else { return nil }
    let timer = DispatchSource.makeTimerSource(queue: .main)
    let nanoseconds = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
    timer.schedule(deadline: .now(), repeating: .nanoseconds(max(nanoseconds, 1_000_000)))
    timer.setEventHandler { MainActor.assumeIsolated { host.notify(.watchdog) } }
    timer.resume()
    return timer
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--help", "-h", "help":
    print(Usage.text)
case "--version":
    // One write, not `print`: print's generic path asks the runtime for conformances, and
    // bench row 3 runs `--version` as the image's share of the fixed cost.
    _ = (HostVersion.string + "\n").withCString { write(STDOUT_FILENO, $0, strlen($0)) }
case "inspect":
    do {
        let (json, results, failures) = try InspectCommand.run(Array(arguments.dropFirst()))
        print(
            json ? InspectCommand.json(results, failures: failures) : InspectCommand.text(results, failures: failures),
            terminator: "")
        exit(results.allSatisfy { if case .success = $0 { true } else { false } } ? 0 : 1)
    } catch {
        usageFailure(error, help: InspectCommand.help)
    }
case "check":
    do {
        let options = try CheckCommand.parse(Array(arguments.dropFirst()))
        let report = CheckReport(options)
        print(options.json ? report.json : report.text)
        exit(report.status)
    } catch {
        usageFailure(error, help: CheckCommand.help)
    }
case "completion":
    do { print(ShellCompletion.script(try ShellCompletion.parse(Array(arguments.dropFirst()))), terminator: "") } catch {
        usageFailure(error, help: "host completion bash|zsh: print the shell completion script")
    }
case "man":
    guard arguments.count == 1 else { usageFailure(UsageError("man: expected no arguments"), help: Usage.text) }
    print(ManPage.text, terminator: "")
case "ctl":
    runCtl(Array(arguments.dropFirst()))
case "new-service":
    do {
        let plan = try NewServiceCommand.plan(Array(arguments.dropFirst()))
        do { try NewServiceCommand.write(plan) } catch { failure("host new-service: \(error)", status: 1) }
        print((["wrote " + plan.directory + ":"] + plan.files.map { "  " + $0.path } + [plan.nextSteps]).joined(separator: "\n"))
    } catch {
        usageFailure(error, help: NewServiceCommand.help)
    }
case WorkerMain.subcommand:
    WorkerMain.run()
case let word? where !word.hasPrefix("-"):
    usageFailure(Usage.unknownCommand(word), help: Usage.text)
default:
    do { run(try RunOptions.parse(arguments)) } catch { usageFailure(error, help: Usage.text) }
}
