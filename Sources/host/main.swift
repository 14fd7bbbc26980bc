// The `host` executable: parses the command line and hands over to HostCore.
import Dispatch
import Glibc
import HostCore

/// Prints a usage error and exits 2.
func usageFailure(_ error: UsageError) -> Never {
    let text = "host: \(error.message)\nTry 'host --help'.\n"
    _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())

switch arguments.first {
case "--help", "-h", "help":
    print(Usage.text)
    exit(0)
case "--version":
    print(HostVersion.string)
    exit(0)
case "inspect":
    do {
        let (json, results) = try InspectCommand.run(Array(arguments.dropFirst()))
        print(json ? InspectCommand.json(results) : InspectCommand.text(results), terminator: "")
        exit(results.allSatisfy { if case .success = $0 { true } else { false } } ? 0 : 1)
    } catch {
        usageFailure(error)
    }
default:
    let options: RunOptions
    do { options = try RunOptions.parse(arguments) } catch { usageFailure(error) }
    let log = Log(level: options.logLevel)
    var trace: TraceWriter?
    if let path = options.traceFile {
        do { trace = try TraceWriter(path: path) } catch {
            log.error("host", "cannot write the trace: \(error)")
            exit(2)
        }
    }
    let host = Host(log: log, trace: trace)
    let failures: [LoadFailure]
    do {
        failures = try host.load(directories: options.pluginDirectories, allowInsecure: options.allowInsecurePlugins)
    } catch {
        log.error("host", error.description)
        exit(2)
    }
    if options.strict && !failures.isEmpty {
        log.error("host", "--strict: \(failures.count) plugin file(s) failed to load; exiting before launch")
        exit(2)
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
    do { try host.launch() } catch { log.error("host", error.description) }
    log.info("host", "\(host.state.name) with \(host.services.count) service(s): "
        + host.services.map(\.id).joined(separator: ", "))
    dispatchMain()
}
