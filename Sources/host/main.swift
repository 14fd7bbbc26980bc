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

/// The bytes of a file, or of standard input for "-".
func readInput(_ path: String) throws(SystemError) -> [UInt8] {
    let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw .current("open", path) }
    defer { if fd != STDIN_FILENO { close(fd) } }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n < 0 && errno == EINTR { continue }
        if n < 0 { throw .current("read", path) }
        if n == 0 { return bytes }
        bytes += chunk[..<n]
    }
}

/// `host ctl …`: one request to a running host.
func runCtl(_ arguments: [String]) -> Never {
    let invocation: CtlCommand.Invocation
    do { invocation = try CtlCommand.parse(arguments, readInput: readInput) } catch { usageFailure(error, help: CtlCommand.help) }
    let path: String
    do { path = try invocation.control ?? ControlPaths.defaultSocket() } catch {
        failure("host ctl: no control socket: \(error) (pass --control PATH)", status: 1)
    }
    let raw: ServiceJSON.JSONValue
    do { raw = try ControlClient.send(invocation.message, to: path) } catch { failure("host ctl: \(error)", status: 1) }
    let reply = ControlReply(json: raw)
    let status = CtlCommand.status(of: reply)
    let text = invocation.json ? raw.serialized : CtlCommand.text(of: reply, command: invocation.message.command.name)
    if status == 1 { failure("host ctl: \(text)", status: 1) }
    print(text)
    exit(status)
}

/// What the app is launched with, from --launch-notification, --launch-url, --launch-activity,
/// --launch-scene.
func launchRequest(_ options: RunOptions) -> LaunchRequest {
    var request = LaunchRequest()
    do throws(InputError) {
        if let file = options.launchNotificationFile {
            let bytes: [UInt8]
            do { bytes = try readInput(file) } catch { throw InputError("--launch-notification: \(error)") }
            request.notification = try PushPayload(parsing: bytes)
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
    let log = Log(level: options.logLevel)
    let request = launchRequest(options)
    var trace: TraceWriter?
    if let path = options.traceFile {
        do { trace = try TraceWriter(path: path) } catch { failure("host: cannot write the trace: \(error)", status: 2) }
    }
    let stateDirectory: StateDirectory
    let firstLaunch: FirstLaunch
    do {
        stateDirectory = try StateDirectory(path: try options.stateDirectory ?? StateDirectory.defaultPath(),
                                            allowInsecure: options.allowInsecurePlugins)
        firstLaunch = try FirstLaunch(mode: options.firstLaunch, stateDirectory: stateDirectory)
    } catch {
        failure("error [host] state directory: \(error)", status: 2)
    }
    let host = Host(log: log, trace: trace, stateDirectory: stateDirectory, firstLaunch: firstLaunch)
    host.answerTimeout = options.fetchTimeout
    // Crash and hang isolation (issue 5), before loading: where each plugin runs depends on it.
    // Per-service policies come from the configuration file (its errors are reported by load).
    var isolation = IsolationSettings(options.isolation, stateDirectory: stateDirectory.path)
    if let path = options.configFile ?? HostConfiguration.defaultPath(pluginDirectories: options.pluginDirectories),
       let configuration = try? HostConfiguration.loadIfPresent(path: path, allowInsecure: options.allowInsecurePlugins) {
        isolation.policies = IsolationSettings.policies(from: configuration)
    }
    host.startIsolation(isolation)
    do {
        host.notifier = try SystemdNotifier.fromEnvironment()
    } catch {
        log.warn("host", "NOTIFY_SOCKET is set but unusable: \(error)")
    }
    do {
        try host.load(options.loadSettings)
    } catch {
        failure("error [host] \(error)", status: 2)
    }
    if host.services.isEmpty { log.warn("host", "no services loaded; running with none") }

    // Installed before launch, so a signal during launch waits for it and then shuts down.
    let coordinator = ShutdownCoordinator(timeout: options.shutdownTimeout, tracker: host.tracker, log: log, hangup: {
        MainActor.assumeIsolated {
            host.log.info("host", "SIGHUP received: reloading")
            do { _ = try host.reload() } catch { host.log.error("host", "reload failed, nothing changed: \(error)") }
        }
    }) {
        MainActor.assumeIsolated {
            try? host.terminate()
            log.info("host", "terminated cleanly")
            exit(0)
        }
    }
    coordinator.install()
    // Bound before launch: requests made while the app launches wait, in order, until it is active.
    let controlPath = options.controlPath ?? ((try? ControlPaths.defaultSocket(stateDirectory: stateDirectory.path))
        ?? stateDirectory.path + "/host.sock")
    let server: ControlServer
    do {
        server = try ControlServer(path: controlPath, maxPayload: options.maxPayload, log: log,
                                   handler: ControlHandler(host: host, willTerminate: coordinator.armDeadline))
    } catch {
        failure("error [host] \(error)", status: 2)
    }
    do {
        let failedRequired = try host.launch(request)
        if !failedRequired.isEmpty {
            log.error("host", "required service(s) failed to launch: \(failedRequired.joined(separator: ", ")); stopping")
            try? host.terminate()
            exit(2)
        }
    } catch {
        log.error("host", error.description)
    }
    let watchdog = startWatchdog(host)
    log.info("host", "\(host.state.name) with \(host.services.count) service(s): "
        + host.services.map(\.id).joined(separator: ", ") + "; control socket \(server.path)")
    withExtendedLifetime(watchdog) { dispatchMain() }
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
    print(HostVersion.string)
case "inspect":
    do {
        let (json, results, failures) = try InspectCommand.run(Array(arguments.dropFirst()))
        print(json ? InspectCommand.json(results, failures: failures) : InspectCommand.text(results, failures: failures),
              terminator: "")
        exit(results.allSatisfy { if case .success = $0 { true } else { false } } ? 0 : 1)
    } catch {
        usageFailure(error, help: InspectCommand.help)
    }
case "ctl":
    runCtl(Array(arguments.dropFirst()))
case WorkerMain.subcommand:
    WorkerMain.run()
case let word? where !word.hasPrefix("-"):
    usageFailure(Usage.unknownCommand(word), help: Usage.text)
default:
    do { run(try RunOptions.parse(arguments)) } catch { usageFailure(error, help: Usage.text) }
}
