// `host ctl`: the control channel's client, one request (or a `watch` stream) to a running host.
import Glibc
import HostCore
import ServiceJSON

/// `host ctl …`: one request to a running host.
func runCtl(_ arguments: [String]) -> Never {
    let invocation: CtlCommand.Invocation
    do {
        invocation = try CtlCommand.parse(
            arguments, readInput: { try InputFile.read($0, limit: RunOptions.largestPayload) })
    } catch { usageFailure(error, help: CtlCommand.help) }
    let path: String
    do { path = try invocation.control ?? ControlPaths.defaultSocket() } catch {
        failure("host ctl: no control socket: \(error) (pass --control PATH)", status: 1)
    }
    if invocation.streams { watch(invocation, path: path) }
    let raw: ServiceJSON.JSONValue
    do { raw = try ControlClient.send(invocation.message, to: path, timeout: invocation.timeout) } catch {
        failure("host ctl: \(error)", status: 1)
    }
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
                if value["ok"]?.boolValue != true {
                    failure("host ctl: \(ControlReply(json: value).error ?? value.serialized)", status: 1)
                }
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
