import Foundation
import TestSupport
import Testing

/// A `host` process for the isolation tests: a RunningHost that also builds bad plugins and
/// reads `ctl list` by service.
final class IsolatedHost: RunningHost {
    /// Compiles the bad-plugin source into `lib/NAME.so`.
    @discardableResult
    func bad(_ name: String, _ defines: [String]) throws -> String {
        try Command.compileC(Repository.fixture("BadPlugins/bad.c"), to: lib + "/\(name).so", defines: defines)
    }

    /// A file in the scratch folder (for BAD_ONCE_MARKER).
    func marker(_ name: String) -> String { "\"\(scratch.file(name))\"" }

    /// `host ctl --json … ARGS`, the reply as an object (an error's too).
    func reply(_ arguments: String...) throws -> [String: Any] {
        let result = try ctl(["--json"] + arguments)
        let text = result.status == 1 ? String(result.stderr.dropFirst("host ctl: ".count)) : result.stdout
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? ["raw": text]
    }

    /// The `ctl list` object of service `id`.
    func service(_ id: String) throws -> [String: Any]? {
        (try reply("list")["services"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }

    /// The deliveries to `id`, as event names.
    func events(of id: String) -> [String] {
        events.filter { $0.hasSuffix(" " + id) }.map { String($0.split(separator: " ")[0]) }
    }
}

/// The lifecycle a well-behaved service sees for launch, background, foreground, activate, terminate.
let steadyLifecycle = [
    "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive",
    "didEnterBackground", "willEnterForeground", "didBecomeActive", "willResignActive",
    "didEnterBackground", "willTerminate",
]
