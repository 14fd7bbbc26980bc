import Foundation
import TestSupport
import Testing

/// A `host` process started on a plugin folder with its own control socket and trace, its
/// log in JSON (`--log-format json`) so tests assert on events and fields, not sentences.
class RunningHost {
    let scratch: Scratch
    let lib: String
    let control: String
    let tracePath: String
    let stateDirectory: String
    private(set) var process: Command.Running?
    /// What the last process to end left (its exit status, stdout, stderr).
    private(set) var lastResult: CommandResult?

    /// A scratch folder with an empty `lib/` to fill before `start`.
    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
        control = scratch.file("host.sock")
        tracePath = scratch.file("trace.jsonl")
        stateDirectory = scratch.file("state")
    }

    /// Compiles a probe into `lib/NAME.so`.
    func probe(_ name: String, _ defines: [String]) throws {
        try Plugins.probe(lib + "/\(name).so", defines)
    }

    /// The system sources that follow the machine's clock and memory, off unless a test turns
    /// them on (`--source time=on`; the last `--source` wins): a test setting the clock, local
    /// midnight or memory pressure on a busy CI machine would add events to every other test's
    /// host (the Logger handles both).
    static let machineSources = ["--source", "time=off", "--source", "memory=off"]

    /// Starts the host (or `executable`) on `plugins` (default: `lib`), with `environment` added
    /// to the tests'; waits until it is `until` (active; background for a launch into the
    /// background) unless `wait` is false.
    func start(
        _ extra: [String] = [], plugins: [String]? = nil, executable: String? = nil, wait: Bool = true,
        until state: String = "active", environment: [String: String]? = nil
    ) throws {
        let folders = (plugins ?? [lib]).flatMap { ["--plugins", $0] }
        process = try Command.start(
            try executable ?? Repository.product("host"),
            folders + [
                "--control", control, "--trace", tracePath, "--state-dir", stateDirectory,
                "--log-format", "json",
            ] + Self.machineSources + extra, environment: environment)
        if wait {
            let active = eventually { (try? ctl("state").stdout.contains("state: \(state)")) == true }
            if !active {
                process?.send(SIGKILL)
                throw TestFailure("the host never became active:\n\(process?.wait().stderr ?? "")")
            }
        }
    }

    /// Runs `host ctl --control … ARGS`.
    @discardableResult
    func ctl(_ arguments: String...) throws -> CommandResult { try ctl(arguments) }

    func ctl(_ arguments: [String]) throws -> CommandResult {
        try Command.run(try Repository.product("host"), ["ctl", "--control", control] + arguments)
    }

    /// Runs `host ctl --json …` and parses the reply.
    func ctlJSON(_ arguments: String...) throws -> (status: Int32, reply: [String: Any]) {
        let result = try Command.run(
            try Repository.product("host"), ["ctl", "--control", control, "--json"] + arguments)
        let text = result.status == 1 ? String(result.stderr.dropFirst("host ctl: ".count)) : result.stdout
        let reply = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? ["raw": text]
        return (result.status, reply)
    }

    /// A file in the scratch folder with `text`.
    @discardableResult
    func file(_ name: String, _ text: String) throws -> String {
        try scratch.write(name, Array(text.utf8))
    }

    /// The trace so far, as "event service" lines.
    var events: [String] { traceEvents(tracePath) }

    /// SIGTERM, then the process's output.
    @discardableResult
    func stop() -> CommandResult { signal(SIGTERM) }

    /// Sends `number` and waits for the process to end.
    @discardableResult
    func signal(_ number: Int32) -> CommandResult { wait(sending: number) }

    /// Waits for the process to end (sending `number` first, if given).
    @discardableResult
    func wait(sending number: Int32? = nil) -> CommandResult {
        if let number { process?.send(number) }
        let result = process!.wait()
        process = nil
        lastResult = result
        return result
    }

    /// The log records of the last process to end.
    var records: [LogRecord] { lastResult?.records ?? [] }

    deinit {
        process?.send(SIGKILL)
        _ = process?.wait()
    }
}

/// Lines of `text` containing `fragment`.
func lines(_ text: String, containing fragment: String) -> [String] {
    text.split(separator: "\n").map(String.init).filter { $0.contains(fragment) }
}

extension Array where Element == LogRecord {
    /// The lines probes (Tests/Fixtures/CPlugins/probe.c) wrote for events of `kinds`: their own
    /// messages, "probe ID: event KIND state …", in order.
    func probe(_ kinds: Int...) -> [LogRecord] {
        filter { record in
            record.event == nil && kinds.contains { record.message.hasPrefix("probe \(record.source): event \($0) ") }
        }
    }

    /// The launch flags (`SH_LAUNCH_*`) the probe `service` was given in willFinishLaunching.
    func launchFlags(of service: String) -> UInt32? { probe(1).first { $0.source == service }?.launchFlags }
}

extension LogRecord {
    /// The `flags=N` of a probe's launch line ("… launch flags=N settings=…"), or nil.
    var launchFlags: UInt32? {
        guard let range = message.range(of: "launch flags=") else { return nil }
        return UInt32(message[range.upperBound...].prefix { $0.isNumber })
    }
}
