import Foundation
import TestSupport
import Testing

/// A reload that replaces a process-isolated plugin's file ends the old version's worker
/// (`worker.retired`), so `service restart` reaches the worker of the version loaded now.
@Suite(.timeLimit(.minutes(10))) struct IsolatedReloadTests {
    /// Whether `pid` is a process not yet ended (a zombie has ended).
    private func alive(_ pid: Int) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    @Test func aReloadOfAChangedFile_endsTheOldWorker_andRestartReachesTheNewOne() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.start(["--isolation", "process"])
        let old = try #require(try host.service("test.b")?["pid"] as? Int)
        let kept = try #require(try host.service("test.a")?["pid"] as? Int)
        // test.b's file replaced in place (a new inode), then a reload.
        try Plugins.probe(host.lib + "/.b.so.new", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"0.2.0\""])
        #expect(rename(host.lib + "/.b.so.new", host.lib + "/b.so") == 0)
        let reload = try host.ctlJSON("reload")
        #expect(reload.status == 0 && reload.reply["replaced"] as? [String] == ["test.b"], "\(reload.reply)")
        let new = try #require(try host.service("test.b")?["pid"] as? Int)
        #expect(new != old && alive(new))
        #expect(eventually(within: 10) { !alive(old) }, "the old version's worker \(old) still runs")
        #expect(try host.service("test.a")?["pid"] as? Int == kept && alive(kept), "an unchanged file's worker stays")
        let copy = mappedBy(pid_t(new), "b.so")
        #expect(copy.count == 1, "\(copy)")
        // The restart replaces the new version's worker, by a worker of that version.
        let restart = try host.ctlJSON("service", "restart", "test.b")
        #expect(restart.status == 0 && restart.reply["restarted"] as? [String] == ["test.b"], "\(restart.reply)")
        let third = try #require(try host.service("test.b")?["pid"] as? Int)
        #expect(third != new && alive(third))
        #expect(eventually(within: 10) { !alive(new) }, "the restart did not reach worker \(new)")
        #expect(mappedBy(pid_t(third), "b.so") == copy)
        #expect(try host.service("test.b")?["version"] as? String == "0.2.0")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let retired = host.records.named(.workerRetired)
        #expect(retired.count == 1 && retired.first?.int("pid") == old, "\(host.records.text)")
        #expect(retired.first?.strings("services") == ["test.b"] && retired.first?.string("path") == host.lib + "/b.so")
    }

    /// The isolation keys are read at start: a reload whose configuration moves a service into a
    /// worker, sandboxes it or changes its deadline does not apply that, and says so in its reply
    /// (`restartNeeded`) and log (`reload.restartNeeded` with the keys); the services run where
    /// they did. A reload with nothing of the kind changed says nothing.
    @Test func aReloadThatChangesIsolationKeys_namesWhatNeedsARestart() throws {
        let host = try IsolatedHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        let config = try host.file("services.json", #"{"services": {"test.b": {"isolation": "process"}}}"#)
        try host.start(["--config", config])
        let worker = try #require(try host.service("test.b")?["pid"] as? Int)
        #expect(try host.service("test.a")?["pid"] == nil, "test.a runs in the host's process")

        let unchanged = try host.ctlJSON("reload")
        #expect(unchanged.status == 0 && unchanged.reply["restartNeeded"] == nil, "\(unchanged.reply)")

        _ = try host.file(
            "services.json",
            #"""
            {"services": {"test.a": {"isolation": "process"},
                          "test.b": {"isolation": "process", "eventTimeout": 3, "sandbox": {"tasksMax": 64}}}}
            """#)
        let reload = try host.ctlJSON("reload")
        #expect(reload.status == 0, "\(reload.reply)")
        #expect(reload.reply["restartNeeded"] as? [String] == ["test.a", "test.b"], "\(reload.reply)")
        #expect(try host.service("test.a")?["pid"] == nil, "test.a was moved into a worker by a reload")
        #expect(try host.service("test.b")?["pid"] as? Int == worker, "test.b's worker was replaced")

        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let lines = host.records.named(.reloadRestartNeeded)
        let keys = Dictionary(lines.map { ($0.string("service") ?? "", $0.strings("keys") ?? []) }, uniquingKeysWith: +)
        #expect(keys == ["test.a": ["isolation"], "test.b": ["sandbox", "eventTimeout"]], "\(host.records.text)")
    }
}
