import Foundation
import TestSupport
import Testing

/// The bad-plugin corpus: files and services that break every rule we could think of, each
/// with what must happen. Every case that can be survived in the host process is loaded into
/// one in-process host; every case is loaded into one `--isolation process` host. Both must
/// keep serving, a well-behaved service in them must see exactly its usual events, and each
/// case must leave its reason in the log.
///
/// Cases a process cannot survive (a crash, an `exit`, a hang inside the host) are marked
/// `.fatalInProcess`: that is what process isolation is for, and they are tested there.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct BadPluginCorpusTests {
    enum Source {
        /// bad.c with these defines.
        case bad([String])
        /// probe.c with these defines.
        case probe([String])
        /// Bytes made by the test.
        case bytes(@Sendable (IsolatedHost) throws -> [UInt8])
        /// A copy of a file.
        case copy(@Sendable () throws -> String)
    }

    enum Expectation {
        /// The loader refuses the file with a reason starting with this, in both modes.
        case refused(String)
        /// It loads; this line shows what it did, and the host goes on (in both modes).
        case survives(Line)
        /// It would take the host down in-process; in a worker, this line says what happened.
        case fatalInProcess(Line)
        /// It loads in both modes; the lines differ.
        case differs(inProcess: Line, process: Line)
    }

    /// A line of the log that shows what a case did.
    enum Line {
        /// A service's own line (no event) whose message starts with this.
        case says(String)
        /// The host's line named `event`, with these fields (`source` is the record's source;
        /// numbers and lists are compared as text, lists joined by commas).
        case host(LogEvent, [String: String])
        /// The loader's refusal of the case's file when its worker crashed or hung while
        /// loading it, with a reason starting with this.
        case loadFailed(String)
        /// Raw text on stderr: an in-process plugin that writes to it itself bypasses the log.
        case stderr(String)
    }

    struct Case {
        let name: String
        let source: Source
        let expected: Expectation
    }

    static let fetchKinds =
        "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING)|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION)"

    static func elf(of host: IsolatedHost, _ defines: [String] = []) throws -> [UInt8] {
        let path = try Command.compileC(
            Repository.fixture("BadPlugins/bad.c"), to: host.scratch.file("elf-\(UUID()).so"),
            defines: ["BAD_ID=\"test.elf\""] + defines)
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static let cases: [Case] = [
        // Files that are not plugins: refused before any code runs.
        Case(
            name: "empty", source: .bytes { _ in [] },
            expected: .refused("not an ELF shared object (the file is empty)")),
        Case(
            name: "random", source: .bytes { _ in (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) } },
            expected: .refused("not an ELF shared object (it starts with bytes")),
        Case(
            name: "text", source: .bytes { _ in Array("#!/bin/sh\necho not a plugin\n".utf8) },
            expected: .refused("not an ELF shared object (it is text, starting")),
        Case(
            name: "truncated", source: .bytes { Array(try elf(of: $0).prefix(40)) },
            expected: .refused("corrupt or truncated ELF file: the ELF header is cut short at 40 bytes")),
        Case(
            name: "othermachine",
            source: .bytes { host in
                var bytes = try elf(of: host)
                bytes[18] = 183
                bytes[19] = 0  // e_machine: EM_AARCH64
                return bytes
            }, expected: .refused("built for another architecture: the file is aarch64")),
        Case(
            name: "systemlib",
            source: .copy {
                let libm = try Command.run("/usr/bin/env", ["cc", "-print-file-name=libm.so.6"]).stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return URL(fileURLWithPath: libm).resolvingSymlinksInPath().path
            }, expected: .refused("no servicehost_entry symbol: not a ServiceHost plugin")),
        Case(
            name: "nometadata", source: .probe(["PROBE_ID=\"test.nometadata\"", "PROBE_NO_METADATA"]),
            expected: .refused("no servicehost_meta section")),
        Case(
            name: "abinew", source: .probe(["PROBE_ID=\"test.abinew\"", "PROBE_ABI_MIN=7", "PROBE_ABI_MAX=9"]),
            expected: .refused("needs a newer host: the plugin speaks ABI versions 7 to 9")),
        Case(
            name: "abiold", source: .probe(["PROBE_ID=\"test.abiold\"", "PROBE_ABI_MIN=0", "PROBE_ABI_MAX=0"]),
            expected: .refused("too old for this host: the plugin speaks ABI version 0")),
        Case(
            name: "badid", source: .bad(["BAD_ID=\"nodots\""]),
            expected: .refused("invalid metadata: service record 1: service id \"nodots\"")),
        Case(
            name: "utf8id", source: .bad(["BAD_ID=\"test.\\xff\""]),
            expected: .refused("invalid metadata: service record 1: id is not valid UTF-8")),
        Case(
            name: "longid", source: .bad(["BAD_ID=\"test.\(String(repeating: "x", count: 123))\""]),
            expected: .refused("invalid metadata: service record 1: id is not NUL-terminated within its 128 bytes")),
        Case(name: "dup1", source: .bad(["BAD_ID=\"test.dup\""]), expected: .survives(.says("bad test.dup: event 3"))),
        Case(
            name: "dup2", source: .bad(["BAD_ID=\"test.dup\""]),
            expected: .refused("duplicate service id test.dup: already provided by")),
        Case(
            name: "undefined", source: .probe(["PROBE_ID=\"test.undefined\"", "PROBE_UNDEFINED"]),
            expected: .refused("dlopen failed:")),
        // servicehost_entry's answers.
        Case(
            name: "entrynull", source: .bad(["BAD_ID=\"test.entrynull\"", "BAD_ENTRY=3"]),
            expected: .refused("servicehost_entry: returned NULL: the plugin failed to initialise")),
        Case(
            name: "smallstruct", source: .bad(["BAD_ID=\"test.smallstruct\"", "BAD_ENTRY=4"]),
            expected: .refused("servicehost_entry: its sh_plugin is 8 bytes, smaller than version 1's")),
        Case(
            name: "nohandler", source: .bad(["BAD_ID=\"test.nohandler\"", "BAD_ENTRY=5"]),
            expected: .refused("servicehost_entry: service test.nohandler has no handle_event")),
        Case(
            name: "noid", source: .bad(["BAD_ID=\"test.noid\"", "BAD_ENTRY=6"]),
            expected: .refused("servicehost_entry: service 0 has no id")),
        Case(
            name: "undeclared", source: .probe(["PROBE_ID=\"test.declared\"", "PROBE_EXPORT_OTHER_ID"]),
            expected: .refused(
                "servicehost_entry: exports service test.undeclared, which its metadata does not declare")),
        // Plugin code that crashes or hangs while loading.
        Case(
            name: "ctorcrash", source: .bad(["BAD_ID=\"test.ctorcrash\"", "BAD_CONSTRUCTOR=1"]),
            expected: .fatalInProcess(
                .loadFailed(
                    "its worker process was killed by signal 11 (SIGSEGV) in dlopen (the library's ELF constructors)"))),
        Case(
            name: "ctorhang", source: .bad(["BAD_ID=\"test.ctorhang\"", "BAD_CONSTRUCTOR=2"]),
            expected: .fatalInProcess(
                .loadFailed(
                    "dlopen (the library's ELF constructors) did not return within 1 s; its worker process was killed"))
        ),
        Case(
            name: "entrycrash", source: .bad(["BAD_ID=\"test.entrycrash\"", "BAD_ENTRY=1"]),
            expected: .fatalInProcess(
                .loadFailed("its worker process was killed by signal 11 (SIGSEGV) in servicehost_entry"))),
        Case(
            name: "entryhang", source: .bad(["BAD_ID=\"test.entryhang\"", "BAD_ENTRY=2"]),
            expected: .fatalInProcess(
                .loadFailed("servicehost_entry did not return within 1 s; its worker process was killed"))),
        // Handlers that crash, exit or hang.
        Case(
            name: "segv",
            source: .bad(["BAD_ID=\"test.segv\"", "BAD_ON_KIND=SH_EVENT_DID_FINISH_LAUNCHING", "BAD_ACTION=1"]),
            expected: .fatalInProcess(
                .host(
                    .workerFailed,
                    [
                        "services": "test.segv", "cause": "signal", "signal": "11",
                        "event": "didFinishLaunching",
                    ]))),
        Case(
            name: "abort",
            source: .bad(["BAD_ID=\"test.abort\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=2"]),
            expected: .fatalInProcess(
                .host(
                    .workerCrashed,
                    [
                        "services": "test.abort", "cause": "signal", "signal": "6",
                        "event": "didBecomeActive",
                    ]))),
        Case(
            name: "exit",
            source: .bad([
                "BAD_ID=\"test.exit\"", "BAD_EVENTS=\(fetchKinds)",
                "BAD_ON_KIND=SH_EVENT_DID_RECEIVE_MEMORY_WARNING", "BAD_ACTION=3",
            ]),
            expected: .fatalInProcess(
                .host(
                    .workerCrashed,
                    [
                        "services": "test.exit", "cause": "exit", "status": "3",
                        "event": "didReceiveMemoryWarning", "restart": "0.1",
                    ]))),
        Case(
            name: "spin",
            source: .bad(["BAD_ID=\"test.spin\"", "BAD_ON_KIND=SH_EVENT_WILL_ENTER_FOREGROUND", "BAD_ACTION=4"]),
            expected: .fatalInProcess(
                .host(.workerCrashed, ["services": "test.spin", "cause": "hang", "event": "willEnterForeground"]))),
        Case(
            name: "sleep",
            source: .bad([
                "BAD_ID=\"test.sleep\"", "BAD_EVENTS=\(fetchKinds)",
                "BAD_ON_KIND=SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION", "BAD_ACTION=9",
            ]),
            expected: .fatalInProcess(
                .host(
                    .workerCrashed,
                    [
                        "services": "test.sleep", "cause": "hang",
                        "event": "didReceiveRemoteNotification",
                    ]))),
        Case(
            name: "closer",
            source: .bad(["BAD_ID=\"test.closer\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=7"]),
            // Status 71: the worker's own exit when its channel to the host is gone (WorkerMain.lostChannelStatus).
            expected: .fatalInProcess(
                .host(
                    .workerCrashed,
                    [
                        "services": "test.closer", "cause": "exit", "status": "71",
                        "event": "didEnterBackground",
                    ]))),
        // Handlers that break the rules and are survived anywhere.
        Case(
            name: "garbage",
            source: .bad(["BAD_ID=\"test.garbage\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=5"]),
            expected: .survives(
                .host(.eventFailed, ["source": "test.garbage", "event": "didBecomeActive", "result": "12345"]))),
        Case(
            name: "twice", source: .bad(["BAD_ID=\"test.twice\"", "BAD_EVENTS=\(fetchKinds)", "BAD_COMPLETE=2"]),
            expected: .survives(
                .host(.completionTwice, ["source": "test.twice", "event": "didReceiveRemoteNotification"]))),
        Case(
            name: "never", source: .bad(["BAD_ID=\"test.never\"", "BAD_EVENTS=\(fetchKinds)", "BAD_COMPLETE=1"]),
            expected: .survives(
                .host(
                    .completionTimeout,
                    [
                        "source": "test.never", "event": "didReceiveRemoteNotification",
                        "deadline": "1",
                    ]))),
        // Under a sanitizer a host call costs many times more: fewer calls fit the deadline.
        Case(
            name: "threads",
            source: .bad([
                "BAD_ID=\"test.threads\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=8",
                "BAD_HAMMER_ROUNDS=\(Sanitizer.isActive ? 25 : 500)",
            ]),
            expected: .survives(
                .says("bad test.threads: 8 threads called the host \(Sanitizer.isActive ? 1000 : 20000) times"))),
        Case(
            name: "flood",
            source: .bad(["BAD_ID=\"test.flood\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=6"]),
            expected: .differs(
                inProcess: .stderr("bad test.flood: stderr line 19999 of a flood"),
                process: .host(.workerOutputThrottled, ["source": "test.flood"]))),
    ]

    /// The deadline of the services that must not be cut short: far beyond what they need, so only
    /// a real hang reaches it (the test's own time limit is longer still).
    static let generousDeadline = 300

    /// Builds every case for `mode` into the host's plugin folder.
    private func build(_ host: IsolatedHost, process: Bool) throws -> [Case] {
        var built: [Case] = []
        for item in Self.cases {
            if case .fatalInProcess = item.expected, !process { continue }
            let path = host.lib + "/\(item.name).so"
            switch item.source {
            case .bad(let defines): try host.bad(item.name, defines)
            case .probe(let defines): try host.probe(item.name, defines)
            case .bytes(let make): try host.scratch.write("lib/\(item.name).so", try make(host))
            case .copy(let source): try host.scratch.copy(try source(), to: "lib/\(item.name).so")
            }
            #expect(FileManager.default.fileExists(atPath: path))
            built.append(item)
        }
        try host.probe("zz-good", ["PROBE_ID=\"test.good\"", "PROBE_EVENTS=\(Self.fetchKinds)", "PROBE_RESULT=1"])
        return built
    }

    private func run(process: Bool) throws {
        let host = try IsolatedHost()
        let cases = try build(host, process: process)
        let fetch = try host.scratch.write("fetch.json", Array(#"{"aps":{"content-available":1}}"#.utf8))
        // Every misbehaving case gets a 1 s deadline, except two that must never miss theirs: the
        // threads case (its 20000 host calls from a worker are 20000 round trips, several seconds
        // on a loaded 2-core machine) and the well-behaved service whose events are compared.
        let configuration = try host.file(
            "services.json",
            """
            {"services": {"test.threads": {"eventTimeout": \(Self.generousDeadline)},
                          "test.good": {"eventTimeout": \(Self.generousDeadline)}}}
            """)
        try host.start([
            "--isolation", process ? "process" : "in-process", "--event-timeout", "1", "--fetch-timeout", "1",
            "--crash-limit", "3/60", "--config", configuration,
        ])
        #expect(try host.ctl("memory-warning").status == 0)
        let fetched = try host.reply("push", fetch)
        #expect((fetched["answers"] as? [String: String])?["test.good"] == "noData")
        #expect(try host.ctl("background").stdout.contains("state: background"))
        #expect(try host.ctl("foreground").stdout.contains("state: inactive"))
        #expect(try host.ctl("activate").stdout.contains("state: active"))
        if process {
            #expect(eventually { (try? host.service("test.segv"))?["state"] as? String == "failed" })
            #expect(eventually { (try? host.service("test.abort"))?["state"] as? String == "failed" })
        }
        #expect(try host.ctl("state").status == 0)
        let result = host.stop()
        #expect(result.status == 0, "the host did not exit cleanly")
        #expect(
            host.events(of: "test.good") == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
                "didReceiveMemoryWarning", "didReceiveRemoteNotification",
                "willResignActive", "didEnterBackground", "willEnterForeground",
                "didBecomeActive", "willResignActive", "didEnterBackground", "willTerminate",
            ])
        let mode = process ? "process" : "in-process"
        let records = result.records
        for item in cases {
            let path = "\(host.lib)/\(item.name).so"
            let line: Line
            switch item.expected {
            case .refused(let reason): line = .loadFailed(reason)
            case .survives(let expected), .fatalInProcess(let expected): line = expected
            case .differs(let inProcess, let inWorker): line = process ? inWorker : inProcess
            }
            let found: Bool
            switch line {
            case .says(let prefix):
                found = !records.messages(startingWith: prefix).isEmpty
            case .host(let event, let fields):
                found = records.named(event).contains { record in
                    fields.allSatisfy { key, value in
                        key == "source" ? record.source == value : record.text(key) == value
                    }
                }
            case .loadFailed(let reason):
                found = records.named(.loadFailed).contains {
                    $0.level == "error" && $0.source == "loader" && $0.string("path") == path
                        && $0.string("reason")?.hasPrefix(reason) == true
                }
            case .stderr(let text):
                found = result.stderr.contains(text)
            }
            #expect(found, "\(mode) case \(item.name): no line \(line)")
        }
        #expect(cases.count >= (process ? 34 : 24))
    }

    @Test func everyCaseInTheHostProcess_thatCanBeSurvived() throws { try run(process: false) }

    @Test func everyCaseInWorkerProcesses() throws { try run(process: true) }
}

extension LogRecord {
    /// A field as text: a string as it is, a number in decimal, a list joined by commas.
    fileprivate func text(_ key: String) -> String? {
        switch fields[key] {
        case let value as String: value
        case let value as Int: String(value)
        case let value as [String]: value.joined(separator: ",")
        default: nil
        }
    }
}
