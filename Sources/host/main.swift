// The `host` executable: parses the command line and hands over to HostCore.
import Dispatch
import Glibc
import HostCore
import ServiceJSON

/// Prints a usage error and exits 2.
func usageFailure(_ error: UsageError) -> Never {
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
    do { invocation = try CtlCommand.parse(arguments, readInput: readInput) } catch { usageFailure(error) }
    let path = invocation.control ?? ControlPaths.defaultSocket(environment: ControlPaths.environment)
    let reply: ServiceJSON.JSONValue
    do { reply = try ControlClient.send(invocation.request, to: path) } catch { failure("host ctl: \(error)", status: 1) }
    let command = invocation.request["command"]?.stringValue ?? ""
    let status = CtlCommand.status(of: reply)
    let text = invocation.json ? reply.serialized : CtlCommand.text(of: reply, command: command)
    if status == 1 { failure("host ctl: \(text)", status: 1) }
    print(text)
    exit(status)
}

/// What the app is launched with, from --launch-notification, --launch-url, --launch-activity.
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
    } catch {
        failure("host: \(error.message)", status: 2)
    }
    return request
}

/// `host --plugins DIR …`: load, launch, serve until terminated.
@MainActor
func run(_ options: RunOptions) -> Never {
    let log = Log(level: options.logLevel)
    let request = launchRequest(options)
    var trace: TraceWriter?
    if let path = options.traceFile {
        do { trace = try TraceWriter(path: path) } catch { failure("host: cannot write the trace: \(error)", status: 2) }
    }
    let host = Host(log: log, trace: trace)
    host.answerTimeout = options.fetchTimeout
    // Crash and hang isolation (issue 5); per-service policies come from the configuration file.
    host.startIsolation(IsolationSettings(
        options.isolation, stateDirectory: ControlPaths.defaultStateDirectory(environment: ControlPaths.environment)))
    let failures: [LoadFailure]
    do {
        failures = try host.load(directories: options.pluginDirectories, allowInsecure: options.allowInsecurePlugins)
    } catch {
        failure("host: \(error)", status: 2)
    }
    if options.strict && !failures.isEmpty {
        failure("error [host] --strict: \(failures.count) plugin file(s) failed to load; exiting before launch", status: 2)
    }
    if host.services.isEmpty { log.warn("host", "no services loaded; running with none") }

    // Installed before launch, so a signal during launch waits for it and then shuts down.
    let coordinator = ShutdownCoordinator(timeout: options.shutdownTimeout, tracker: host.tracker, log: log) {
        MainActor.assumeIsolated {
            try? host.terminate()
            log.info("host", "terminated cleanly")
            exit(0)
        }
    }
    coordinator.install()
    // Bound before launch: requests made while the app launches wait, in order, until it is active.
    let controlPath = options.controlPath ?? ControlPaths.defaultSocket(environment: ControlPaths.environment)
    let server: ControlServer
    do {
        server = try ControlServer(path: controlPath, maxPayload: options.maxPayload, log: log,
                                   handler: ControlHandler(host: host, willTerminate: coordinator.armDeadline))
    } catch {
        failure("error [host] \(error)", status: 2)
    }
    do { try host.launch(request) } catch { log.error("host", error.description) }
    log.info("host", "\(host.state.name) with \(host.services.count) service(s): "
        + host.services.map(\.id).joined(separator: ", ") + "; control socket \(server.path)")
    dispatchMain()
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
        usageFailure(error)
    }
case "ctl":
    runCtl(Array(arguments.dropFirst()))
case WorkerMain.subcommand:
    WorkerMain.run()
default:
    do { run(try RunOptions.parse(arguments)) } catch { usageFailure(error) }
}
