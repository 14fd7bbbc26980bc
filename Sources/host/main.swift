// The `host` executable: parses the command line and hands over to HostCore.
import Glibc
import HostCore

/// Prints a usage error and exits 2; for `--help`, prints `help` and exits 0.
func usageFailure(_ error: UsageError, help: String) -> Never {
    if error.isHelp {
        print(help)
        exit(0)
    }
    failure("host: \(error.message)\nTry 'host --help'.", status: HostExitStatus.cannotRun.rawValue)
}

/// Prints `message` on stderr and exits with `status`.
func failure(_ message: String, status: Int32) -> Never {
    _ = (message + "\n").withCString { write(STDERR_FILENO, $0, strlen($0)) }
    exit(status)
}

/// `host --plugins DIR …`: load, launch, serve until terminated (HostStartup says how).
@MainActor
func run(_ options: RunOptions) -> Never {
    // First thing: from here on SIGTERM, SIGINT and SIGHUP are recorded, never lost.
    ShutdownCoordinator.catchSignals()
    HostClockStart.touch()
    let startup = HostStartup(options)
    do throws(StartupError) { try startup.start().serve() } catch {
        if case .launchOptions(let message) = error { failure("host: \(message)", status: error.status) }
        // What the start built stays as it is: the process ends here.
        withExtendedLifetime(startup) { exit(error.status) }
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--help", "-h", "help":
    print(Usage.text)
case "--version":
    // One write, not `print`: print's generic path asks the runtime for conformances, and
    // bench row 3 runs `--version` as the image's share of the fixed cost.
    _ = (HostVersion.string + "\n").withCString { write(STDOUT_FILENO, $0, strlen($0)) }
case "inspect" where arguments.contains("--security"):
    do {
        let (_, text, valid) = try InspectCommand.security(Array(arguments.dropFirst()))
        print(text, terminator: "")
        exit((valid ? HostExitStatus.clean : .forcedOrWarnings).rawValue)
    } catch {
        usageFailure(error, help: InspectCommand.help)
    }
case "inspect":
    do {
        let (json, results, failures, signatures) = try InspectCommand.run(Array(arguments.dropFirst()))
        print(
            json
                ? InspectCommand.json(results, failures: failures, signatures: signatures)
                : InspectCommand.text(results, failures: failures, signatures: signatures),
            terminator: "")
        let valid = results.allSatisfy { if case .success = $0 { true } else { false } }
        exit((valid ? HostExitStatus.clean : .forcedOrWarnings).rawValue)
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
    do { print(ShellCompletion.script(try ShellCompletion.parse(Array(arguments.dropFirst()))), terminator: "") } catch
    {
        usageFailure(error, help: "host completion bash|zsh: print the shell completion script")
    }
case "man":
    guard arguments.count == 1 else { usageFailure(UsageError("man: expected no arguments"), help: Usage.text) }
    print(ManPage.text, terminator: "")
case "ctl":
    runCtl(Array(arguments.dropFirst()))
case "desktop":
    runDesktop(Array(arguments.dropFirst()))
case "fleet":
    let invocation: FleetCommand.Invocation
    do { invocation = try FleetCommand.parse(Array(arguments.dropFirst())) } catch {
        if error.isHelp { usageFailure(error, help: FleetCommand.help) }
        failure(
            "host: \(error.message)\nTry 'host fleet --help'.",
            status: FleetCommand.ExitStatus.badArguments.rawValue)
    }
    let status = FleetCommand.run(
        invocation,
        print: { line in
            print(line)
            fflush(nil)
        },
        note: { line in _ = (line + "\n").withCString { write(STDERR_FILENO, $0, strlen($0)) } })
    exit(status.rawValue)
case "open":
    runOpen(Array(arguments.dropFirst()))
case "action":
    runOpen(Array(arguments.dropFirst()), action: true)
case "new-service":
    do {
        let plan = try NewServiceCommand.plan(Array(arguments.dropFirst()))
        do { try NewServiceCommand.write(plan) } catch { failure("host new-service: \(error)", status: 1) }
        print(
            (["wrote " + plan.directory + ":"] + plan.files.map { "  " + $0.path } + [plan.nextSteps]).joined(
                separator: "\n"))
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
