import Foundation
import TestSupport

/// Runs a documented transcript's command lines as a reader types them, `host` being this
/// build's binary and `host ctl` talking to the test's socket (a `host` script first on
/// `PATH`, as an alias would be beside bind9's `host`).
struct TranscriptShell {
    let folder: String
    let environment: [String: String]

    /// A `bin/host` wrapper in `scratch`; commands run in `scratch`'s folder, with `extra`
    /// added to the environment.
    init(_ scratch: Scratch, control: String, environment extra: [String: String] = [:]) throws {
        let executable = try Repository.product("host")
        _ = try scratch.folder("bin")
        let script = """
            #!/bin/sh
            if [ "$1" = ctl ]; then shift; exec "\(executable)" ctl --control "\(control)" "$@"; fi
            exec "\(executable)" "$@"

            """
        _ = try scratch.write("bin/host", Array(script.utf8), mode: 0o755)
        folder = scratch.path
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        // No system bus, whatever the machine has: the sleep source says it is off, the same everywhere.
        environment = ["PATH": scratch.file("bin") + ":" + path, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"]
            .merging(extra) { $1 }
    }

    /// Runs `line` with `/bin/sh -c` in the folder.
    func run(_ line: String) throws -> CommandResult {
        try Command.run("/bin/sh", ["-c", line], environment: environment, directory: folder)
    }

    /// The lines `line` printed on stdout.
    static func lines(_ result: CommandResult) -> [String] {
        result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast()
    }
}
