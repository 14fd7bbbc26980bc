import Glibc

/// Row 12 (issue 39): the desktop's paths to a URL handler. With DeepLinks (it claims
/// `myapp`) and an entry written by `host desktop install` in a private XDG_DATA_HOME:
/// - warm: `host open myapp://item/1 [options]` to a running host, exec → exit, against
///   `host ctl open myapp://item/1`, exec → exit (the same request, the same socket);
/// - cold: `xdg-open myapp://item/1` with no host running, exec → DeepLinks' "open item 1
///   (launch)" line, against the host's own start-up on the same plugin, exec → active; for
///   reference, the two parts of that path: xdg-open to an entry running /bin/true, and
///   `host open myapp://item/1` (the entry's Exec) with no host running.
/// Needs Debian's xdg-utils (pending without it).
struct DesktopRow {
    let host: String
    let deepLinks: String
    let reps: Int

    private(set) var raw: [(String, Double)] = []

    static let xdgOpen = "/usr/bin/xdg-open"

    mutating func run(root: String) throws(BenchError) -> [Row] {
        let labels = (
            warm: "`host open URL` to a running host (exec → exit) vs `host ctl open URL`",
            cold:
                "cold `xdg-open URL` → handled by the service (exec → its line) vs the host's start-up (exec → active)"
        )
        guard access(Self.xdgOpen, X_OK) == 0 else {
            return [
                .pending("12", labels.warm, target: "≤ 1.2×", needs: "xdg-utils (scripts/test-packages installs it)"),
                .pending("12", labels.cold, target: "≤ 1.3×", needs: "xdg-utils (scripts/test-packages installs it)"),
            ]
        }
        let base = root + "/desktop"
        let lib = base + "/lib"
        for directory in [base, lib, base + "/state", base + "/run", base + "/data", base + "/config"] {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))")
            }
        }
        chmod(lib, 0o755)
        let bytes: [UInt8]
        do { bytes = try readFile(deepLinks) } catch { throw BenchError("reading \(deepLinks): \(error)") }
        try writePluginFile(bytes, to: lib + "/libDeepLinks.so")
        let control = base + "/host.sock"
        let options = ["--plugins", lib, "--control", control, "--state-dir", base + "/state"]
        let environment = [
            "HOME": base, "XDG_DATA_HOME": base + "/data", "XDG_CONFIG_HOME": base + "/config",
            "XDG_RUNTIME_DIR": base + "/run", "XDG_DATA_DIRS": base + "/nowhere", "DISPLAY": ":99",
        ]
        _ = try runToExit(host, ["desktop", "install", "--name", "Bench"] + options, environment: environment)
        // xdg-open's own share: an entry for another scheme that runs /bin/true.
        try writePluginFile(
            Array(
                "[Desktop Entry]\nType=Application\nName=True\nExec=/bin/true %u\nMimeType=x-scheme-handler/benchtrue;\n"
                    .utf8), to: base + "/data/applications/bench-true.desktop")
        _ = try runToExit(
            "/usr/bin/xdg-mime", ["default", "bench-true.desktop", "x-scheme-handler/benchtrue"],
            environment: environment)

        // Warm: one running host, the two clients alternating.
        var running = try Child(host, options, capture: 2, environment: environment)
        guard running.waitFor("] active with ") else {
            running.finish(signal: nil)
            throw BenchError("row 12: the host did not become active:\n\(running.text)")
        }
        let url = "myapp://item/1"
        var warm = (open: [Double](), ctl: [Double]())
        for rep in 0...reps {  // rep 0: warm-up
            let open = try runToExit(host, ["open", url] + options, environment: environment)
            let ctl = try runToExit(host, ["ctl", "--control", control, "open", url], environment: environment)
            if rep > 0 {
                warm.open.append(open)
                warm.ctl.append(ctl)
            }
        }
        running.finish(signal: SIGTERM)

        // Cold: xdg-open starts the host; the host's start-up alone is the baseline.
        var cold = (xdgOpen: [Double](), startup: [Double](), xdgTrue: [Double](), hostOpen: [Double]())
        for rep in 0...reps {
            let start = nowNanoseconds()
            var opened = try Child(Self.xdgOpen, [url], capture: 2, environment: environment, newGroup: true)
            guard opened.waitFor("open item 1 (launch)") else {
                opened.finishGroup(signal: SIGKILL)
                throw BenchError("row 12: xdg-open \(url) never reached DeepLinks:\n\(opened.text)")
            }
            let handled = nowNanoseconds() - start
            // SIGTERM to the group: the host (xdg-open's child) shuts down cleanly, its socket gone.
            opened.finishGroup(signal: SIGTERM)
            let started = nowNanoseconds()
            var plain = try Child(host, options, capture: 2, environment: environment)
            guard plain.waitFor("] active with ") else {
                plain.finish(signal: nil)
                throw BenchError("row 12: the host did not become active:\n\(plain.text)")
            }
            let active = nowNanoseconds() - started
            plain.finish(signal: SIGTERM)
            let alone = try runToExit(Self.xdgOpen, ["benchtrue://x"], environment: environment)
            // The host's own cold path, what the entry's Exec runs: no host, so `host open`
            // execs one with --launch-url.
            let openStart = nowNanoseconds()
            var hostOpen = try Child(
                host, ["open", url] + options, capture: 2, environment: environment, newGroup: true)
            guard hostOpen.waitFor("open item 1 (launch)") else {
                hostOpen.finishGroup(signal: SIGKILL)
                throw BenchError("row 12: host open \(url) never reached DeepLinks:\n\(hostOpen.text)")
            }
            let openHandled = nowNanoseconds() - openStart
            hostOpen.finishGroup(signal: SIGTERM)
            if rep > 0 {
                cold.xdgOpen.append(handled)
                cold.startup.append(active)
                cold.xdgTrue.append(alone)
                cold.hostOpen.append(openHandled)
            }
        }
        raw += [
            ("desktop.host_open_ns", median(warm.open)), ("desktop.ctl_open_ns", median(warm.ctl)),
            ("desktop.xdg_open_cold_ns", median(cold.xdgOpen)), ("desktop.startup_ns", median(cold.startup)),
            ("desktop.xdg_open_true_ns", median(cold.xdgTrue)), ("desktop.host_open_cold_ns", median(cold.hostOpen)),
        ]
        return [
            .paired(
                row: "12", measured: labels.warm, unit: .nanoseconds, ours: warm.open, baseline: warm.ctl,
                target: "≤ 1.2×", maxRatio: 1.2),
            .paired(
                row: "12", measured: labels.cold, unit: .nanoseconds, ours: cold.xdgOpen, baseline: cold.startup,
                target: "≤ 1.3×", maxRatio: 1.3),
            // What xdg-open itself costs (a shell script: it detects the desktop, reads
            // mimeapps.list and the entry), so the cold row's ratio can be read.
            .paired(
                row: "12",
                measured:
                    "for reference: `xdg-open` to an entry that runs /bin/true (exec → exit), vs the host's start-up",
                unit: .nanoseconds, ours: cold.xdgTrue, baseline: cold.startup, target: "—"),
            // The host's share of the cold row: `host open` finding no host and exec'ing one.
            .paired(
                row: "12",
                measured:
                    "for reference: cold `host open URL` (the entry's Exec, without xdg-open) → handled, vs the host's start-up",
                unit: .nanoseconds, ours: cold.hostOpen, baseline: cold.startup, target: "—"),
        ]
    }

}
