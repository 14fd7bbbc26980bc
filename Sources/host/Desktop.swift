// `host desktop …` and `host open …`: the app on the Linux desktop (README "On the Linux desktop").
import Glibc
import HostCore

/// `host desktop install|uninstall|status`.
func runDesktop(_ arguments: [String]) -> Never {
    let options: DesktopCommand.Options
    do { options = try DesktopCommand.parse(arguments) } catch { usageFailure(error, help: DesktopCommand.help) }
    let report = DesktopRegistration.perform(options)
    print(options.json ? report.json.serialized : report.text(options.action))
    switch options.action {
    case .status: exit(report.status)
    case .install, .uninstall: exit(report.problems.isEmpty ? 0 : 1)
    }
}

/// `host open [URL] [run options]` (`action` false) or `host action ID [run options]`: the running
/// host opens the URL or performs the quick action, or this process becomes the host and
/// launches with it.
func runOpen(_ arguments: [String], action: Bool = false) -> Never {
    let invocation: OpenCommand.Invocation
    let name = action ? "host action" : "host open"
    do { invocation = try action ? OpenCommand.parseAction(arguments) : OpenCommand.parse(arguments) } catch {
        usageFailure(error, help: action ? OpenCommand.actionHelp : OpenCommand.help)
    }
    if let words = OpenCommand.ctlArguments(invocation) {
        do {
            let message = try CtlCommand.parse(words, readInput: { _ in [] }).message
            let raw = try ControlClient.send(message, to: invocation.controlPath, timeout: 10)
            let reply = ControlReply(json: raw)
            let text =
                CtlCommand.operateText(of: reply, command: message.command)
                ?? CtlCommand.text(of: reply, command: message.command.name)
            let status = CtlCommand.status(of: reply)
            if status == 1 { failure("\(name): \(text)", status: 1) }
            print(text)
            exit(status)
        } catch let error as ControlClient.ClientError where error.hostNotRunning {
            // No host: this process becomes it (below).
        } catch {
            failure("\(name): \(error)", status: 1)
        }
    } else {
        // Only a socket nobody listens on means no host: any other failure (a timeout, a
        // refusal) is an error, never a reason to start a second host.
        do throws(ControlClient.ClientError) {
            _ = try ControlClient.send(ControlMessage(.init("state")), to: invocation.controlPath, timeout: 10)
            exit(0)  // already running: nothing to open
        } catch {
            // No host: this process becomes it (below).
            if !error.hostNotRunning { failure("\(name): \(error)", status: 1) }
        }
    }
    // A cold launch: exec, so the desktop's process is the host (its stdio, its signals).
    let words = ["host"] + OpenCommand.coldStartArguments(invocation)
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    let executable = DesktopCommand.hostExecutable()
    execv(executable, argv)
    failure("\(name): cannot start \(executable): \(String(cString: strerror(errno)))", status: 1)
}
