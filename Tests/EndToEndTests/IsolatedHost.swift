import Foundation
import Testing
import TestSupport

/// A `host` process for the isolation tests: its own plugin folder, control socket, trace and
/// state directory (through XDG_STATE_HOME, so the sentinel and failure records are private).
final class IsolatedHost {
    let scratch: Scratch
    let lib: String
    let control: String
    let tracePath: String
    /// The state directory the host uses: `$XDG_STATE_HOME/servicehost`.
    let stateDirectory: String
    private let stateHome: String
    private(set) var process: Command.Running?

    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
        control = scratch.file("host.sock")
        tracePath = scratch.file("trace.jsonl")
        stateHome = scratch.file("state")
        stateDirectory = stateHome + "/servicehost"
    }

    /// Compiles the bad-plugin source into `lib/NAME.so`.
    @discardableResult
    func bad(_ name: String, _ defines: [String]) throws -> String {
        try Command.compileC(Repository.fixture("BadPlugins/bad.c"), to: lib + "/\(name).so", defines: defines)
    }

    /// Compiles the probe into `lib/NAME.so`.
    @discardableResult
    func probe(_ name: String, _ defines: [String]) throws -> String {
        try Plugins.probe(lib + "/\(name).so", defines)
    }

    /// A file in the scratch folder (for BAD_ONCE_MARKER).
    func marker(_ name: String) -> String { "\"\(scratch.file(name))\"" }

    /// Starts the host (or `executable`); waits until it is active unless `wait` is false.
    func start(_ extra: [String], plugins: [String]? = nil, executable: String? = nil, wait: Bool = true) throws {
        let folders = (plugins ?? [lib]).flatMap { ["--plugins", $0] }
        process = try Command.start(try executable ?? Repository.product("host"),
                                    folders + ["--control", control, "--trace", tracePath] + extra,
                                    environment: ["XDG_STATE_HOME": stateHome])
        if wait {
            let active = eventually { (try? ctl("state").stdout.contains("state: active")) == true }
            if !active {
                process?.send(SIGKILL)
                throw TestFailure("the host never became active:\n\(process?.wait().stderr ?? "")")
            }
        }
    }

    /// `host ctl --control … ARGS`.
    @discardableResult
    func ctl(_ arguments: String...) throws -> CommandResult { try ctl(arguments) }

    func ctl(_ arguments: [String]) throws -> CommandResult {
        try Command.run(try Repository.product("host"), ["ctl", "--control", control] + arguments)
    }

    /// `host ctl --json … ARGS`, parsed.
    func ctlJSON(_ arguments: String...) throws -> [String: Any] {
        let result = try Command.run(try Repository.product("host"), ["ctl", "--control", control, "--json"] + arguments)
        let text = result.status == 1 ? String(result.stderr.dropFirst("host ctl: ".count)) : result.stdout
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? ["raw": text]
    }

    /// The `ctl list` object of service `id`.
    func service(_ id: String) throws -> [String: Any]? {
        (try ctlJSON("list")["services"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }

    /// The deliveries so far, as "event service".
    var events: [String] { traceEvents(tracePath) }

    /// The deliveries to `id`, as event names.
    func events(of id: String) -> [String] {
        events.filter { $0.hasSuffix(" " + id) }.map { String($0.split(separator: " ")[0]) }
    }

    /// SIGTERM, then the process's output.
    func stop() -> CommandResult { signal(SIGTERM) }

    /// Sends `number` and waits for the process to end.
    func signal(_ number: Int32) -> CommandResult {
        process?.send(number)
        let result = process!.wait()
        process = nil
        return result
    }

    deinit {
        process?.send(SIGKILL)
        _ = process?.wait()
    }
}

/// The lifecycle a well-behaved service sees for launch, background, foreground, activate, terminate.
let steadyLifecycle = ["willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive",
                       "didEnterBackground", "willEnterForeground", "didBecomeActive", "willResignActive",
                       "didEnterBackground", "willTerminate"]
