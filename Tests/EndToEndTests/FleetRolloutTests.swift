import Foundation
import TestSupport
import Testing

/// `host fleet` (issue 41 item 3) with a real Mosquitto, real minisign and 20 real hosts on this
/// machine, each with its own prefix (`servicehost/hNN`) and state folder, the MQTTBridge plugin
/// and small probes: a good bundle published by `host fleet publish` and rolled out in waves 1,
/// 25%, 100% reaches all 20, each reporting `applied`; a bundle whose plugin crashes on
/// didBecomeActive is rolled back on the canary, the rollout stops before wave 2 and puts the
/// canary back, and `fleet status --json` names the host, the service and the reason; a host
/// killed (SIGKILL) during a rollout counts as a failure after `--wait` and is listed. The good
/// rollout and the stopped one are README's "Rolling out to a fleet" transcript.
@Suite(
    .timeLimit(.minutes(15)),
    .enabled(if: Mosquitto.installed != nil && Minisign.installed != nil, "needs mosquitto and minisign"))
struct FleetRolloutTests {
    /// A folder of `host`'s plugins (the bridge, the probe) and test.b at `version` (crashing on
    /// didBecomeActive when `crashing`), for `host fleet publish`.
    static func bundleFolder(for host: RunningHost, in scratch: Scratch, name: String, version: String, crashing: Bool)
        throws -> String
    {
        let set = try scratch.folder(name)
        if crashing {
            try Command.compileC(
                Repository.fixture("BadPlugins/bad.c"), to: set + "/b.so",
                defines: ["BAD_ID=\"test.b\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=1"])
        } else {
            try Plugins.probe(set + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_VERSION=\"\(version)\""])
        }
        for file in ["libMQTTBridge.so", "probe.so"] {
            try FileManager.default.copyItem(atPath: host.lib + "/" + file, toPath: set + "/" + file)
        }
        return set
    }

    /// `host fleet ARGS --broker …` in `directory`.
    static func fleet(_ arguments: [String], _ broker: Mosquitto, in directory: String) throws -> CommandResult {
        try Command.run(
            try Repository.product("host"),
            ["fleet"] + arguments + ["--broker", "tcp://127.0.0.1:\(broker.port)"], directory: directory)
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// A transcript of what was run and what it printed, as README shows it.
    final class Transcript {
        var lines: [String] = []

        func add(_ command: String, _ result: CommandResult) {
            lines.append("$ " + command)
            lines += result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }

        /// Digests are the run's own: each is compared as `<digest>`.
        static func normalized(_ lines: [String]) -> [String] {
            lines.map { $0.replacing(/[0-9a-f]{64}/, with: "<digest>") }
        }
    }

    @Test func aGoodBundleReachesTwentyHostsInWaves_aCrashingOneStopsAtTheCanary_aHostKilledIsListed() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let ids = (1...20).map { String(format: "h%02d", $0) }
        let hosts = try ids.map {
            try FleetDesiredStateTests.fleetHost($0, port: broker.port, key: key, isolateB: true)
        }
        // Started together, then waited for.
        for host in hosts { try host.start(wait: false) }
        for (id, host) in zip(ids, hosts) {
            #expect(eventually { (try? host.ctl("state").stdout.contains("state: active")) == true }, "\(id)")
        }
        for id in ids { #expect(MQTTBridgeTests.subscribed(broker, id), "\(id)") }
        let transcript = Transcript()

        // A good bundle, in waves of 1, 25% and 100%.
        _ = try Self.bundleFolder(for: hosts[0], in: scratch, name: "bundle", version: "0.2.0", crashing: false)
        _ = try scratch.copy(key.secretKeyFile, to: "release.key", mode: 0o600)
        let publish = try Self.fleet(["publish", "bundle", "--sign", "release.key"], broker, in: scratch.path)
        #expect(publish.status == 0, "\(publish.stderr)")
        let good = publish.stdout.trimmingCharacters(in: .newlines)
        #expect(good.count == 64, "\(publish.stdout)")
        transcript.add("host fleet publish bundle --sign release.key", publish)
        let rolloutArguments = ["--hosts", "h*", "--waves", "1,25%,100%", "--wait", "2m", "--probation", "1s"]
        let rollout = try Self.fleet(["rollout", good] + rolloutArguments, broker, in: scratch.path)
        #expect(rollout.status == 0, "\(rollout.stdout)\(rollout.stderr)")
        transcript.add("host fleet rollout \(good) --hosts 'h*' --waves 1,25%,100% --wait 2m --probation 1s", rollout)
        let waves = rollout.stdout.split(separator: "\n").filter { $0.hasPrefix("wave ") && $0.contains(" host") }
        #expect(waves.map { $0.split(separator: ":")[1] } == [" 1 host", " 4 hosts", " 15 hosts"], "\(rollout.stdout)")
        // Every host reports applied, generation 1, test.b 0.2.0.
        var status = try Self.fleet(["status", "--json"], broker, in: scratch.path)
        #expect(status.status == 0, "\(status.stderr)")
        var reported = Self.json(status.stdout)
        let rows = reported["hosts"] as? [[String: Any]] ?? []
        #expect(rows.map { $0["host"] as? String } == ids, "\(status.stdout)")
        for row in rows {
            #expect(row["status"] as? String == "applied" && row["generation"] as? Int == 1, "\(row)")
            #expect(row["digest"] as? String == good && row["online"] as? Bool == true, "\(row)")
            #expect((row["failing"] as? [Any])?.isEmpty == true, "\(row)")
        }
        let completed = reported["rollout"] as? [String: Any]
        #expect(completed?["status"] as? String == "completed" && (completed?["applied"] as? [String])?.count == 20)
        for id in ids {
            let report = FleetDesiredStateTests.reported(broker, id)
            #expect(FleetDesiredStateTests.services(report)["test.b"] == "0.2.0", "\(id): \(report)")
        }
        let table = try Self.fleet(["status", "h0[1-3]"], broker, in: scratch.path)
        transcript.add("host fleet status 'h0[1-3]'", table)

        // A bundle whose test.b crashes on didBecomeActive: rolled back on the canary, the rollout
        // stops before wave 2 and puts the canary back.
        _ = try Self.bundleFolder(for: hosts[0], in: scratch, name: "crashing", version: "0.3.0", crashing: true)
        let crashing = try Self.fleet(["publish", "crashing", "--sign", "release.key"], broker, in: scratch.path)
        #expect(crashing.status == 0, "\(crashing.stderr)")
        transcript.add("host fleet publish crashing --sign release.key", crashing)
        let bad = crashing.stdout.trimmingCharacters(in: .newlines)
        let stopped = try Self.fleet(["rollout", bad] + rolloutArguments, broker, in: scratch.path)
        #expect(stopped.status == 3, "\(stopped.stdout)\(stopped.stderr)")
        transcript.add("host fleet rollout \(bad) --hosts 'h*' --waves 1,25%,100% --wait 2m --probation 1s", stopped)
        #expect(!stopped.stdout.contains("wave 2/3"), "\(stopped.stdout)")
        // Wave 2's hosts were never given it; the canary is given back the good bundle.
        for id in ids.dropFirst() {
            #expect(try broker.retained("servicehost/\(id)/desired")?.contains(good) == true, "\(id)")
        }
        #expect(try broker.retained("servicehost/h01/desired")?.contains(good) == true)
        status = try Self.fleet(["status", "--json"], broker, in: scratch.path)
        reported = Self.json(status.stdout)
        let record = reported["rollout"] as? [String: Any]
        #expect(record?["status"] as? String == "stopped" && record?["wave"] as? Int == 1, "\(status.stdout)")
        let failures = record?["failures"] as? [[String: Any]] ?? []
        #expect(failures.count == 1, "\(status.stdout)")
        #expect(failures.first?["host"] as? String == "h01", "\(failures)")
        #expect(failures.first?["service"] as? String == "test.b", "\(failures)")
        #expect(failures.first?["reason"] as? String == "signal", "\(failures)")
        #expect(failures.first?["status"] as? String == "rolledBack", "\(failures)")
        // The canary, given the good bundle back, runs it without a deploy: applied again.
        #expect(FleetDesiredStateTests.report(broker, "h01", good, "applied")["status"] as? String == "applied")
        let h01 = try Self.fleet(["status", "h01"], broker, in: scratch.path)
        transcript.add("host fleet status h01", h01)

        // A host killed during a rollout: a failure after --wait, listed.
        _ = try Self.bundleFolder(for: hosts[0], in: scratch, name: "third", version: "0.4.0", crashing: false)
        let third = try Self.fleet(["publish", "third", "--sign", "release.key"], broker, in: scratch.path)
        let digest = third.stdout.trimmingCharacters(in: .newlines)
        _ = try scratch.write("list", Array("# the last three\nh18\nh19\nh20  # this one is killed\n".utf8))
        let running = try Command.start(
            try Repository.product("host"),
            [
                "fleet", "rollout", digest, "--file", "list", "--waves", "100%", "--max-failures", "1", "--wait",
                "30s", "--probation", "3s", "--broker", "tcp://127.0.0.1:\(broker.port)",
            ], directory: scratch.path)
        #expect(eventually { (try? broker.retained("servicehost/h20/desired"))?.contains(digest) == true })
        hosts[19].signal(SIGKILL)
        let killed = running.wait()
        #expect(killed.status == 0, "\(killed.stdout)\(killed.stderr)")
        #expect(killed.stdout.contains("h20 noReport"), "\(killed.stdout)")
        reported = Self.json(try Self.fleet(["status", "--json", "h*"], broker, in: scratch.path).stdout)
        let last = reported["rollout"] as? [String: Any]
        #expect(last?["status"] as? String == "completed", "\(reported)")
        #expect((last?["failures"] as? [[String: Any]])?.map { $0["host"] as? String } == ["h20"], "\(reported)")
        #expect(Set(last?["applied"] as? [String] ?? []) == ["h18", "h19"], "\(reported)")

        for host in hosts.dropLast() { host.stop() }

        // README's transcript is this run's.
        let readme = try Documentation.section("Rolling out to a fleet").codeBlocks(language: "text").first ?? []
        #expect(
            Transcript.normalized(readme) == Transcript.normalized(transcript.lines),
            "README's transcript; this run printed:\n\(transcript.lines.joined(separator: "\n"))")
    }

    /// A rollout interrupted (its process killed) goes on when the same command runs again; one
    /// cancelled stops where it is, its process exits 4, and its wave in progress is put back.
    /// `ghost` is listed but never reports: each wave it is in waits for it until `--wait`.
    @Test func anInterruptedRolloutResumes_andACancelledOneStopsAndPutsItsWaveBack() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let hosts = try ["h1", "h2"].map { try FleetDesiredStateTests.fleetHost($0, port: broker.port, key: key) }
        for host in hosts { try host.start(wait: false) }
        for (id, host) in zip(["h1", "h2"], hosts) {
            #expect(eventually { (try? host.ctl("state").stdout.contains("state: active")) == true }, "\(id)")
            #expect(MQTTBridgeTests.subscribed(broker, id))
        }
        _ = try scratch.copy(key.secretKeyFile, to: "release.key", mode: 0o600)
        _ = try scratch.write("list", Array("ghost\nh1\nh2\n".utf8))
        func published(_ name: String, _ version: String) throws -> String {
            _ = try Self.bundleFolder(for: hosts[0], in: scratch, name: name, version: version, crashing: false)
            return try Self.fleet(["publish", name, "--sign", "release.key"], broker, in: scratch.path).stdout
                .trimmingCharacters(in: .newlines)
        }
        func record() -> [String: Any] {
            Self.json((try? broker.retained("servicehost/rollouts/current")) ?? "")
        }
        func start(_ digest: String, wait: String, waves: String = "1,100%") throws -> Command.Running {
            try Command.start(
                try Repository.product("host"),
                [
                    "fleet", "rollout", digest, "--file", "list", "--waves", waves, "--max-failures", "1",
                    "--wait", wait, "--probation", "1s", "--broker", "tcp://127.0.0.1:\(broker.port)",
                ], directory: scratch.path)
        }
        let good = try published("good", "0.2.0")
        // Killed while its first wave (ghost) waits: the record says where it was.
        let first = try start(good, wait: "15s")
        #expect(eventually { (try? broker.retained("servicehost/ghost/desired"))?.contains(good) == true })
        first.send(SIGKILL)
        _ = first.wait()
        #expect(record()["status"] as? String == "running" && record()["wave"] as? Int == 1, "\(record())")
        let resumed = try Self.fleet(
            ["rollout", good, "--file", "list", "--waves", "1,100%", "--max-failures", "1", "--wait", "15s"], broker,
            in: scratch.path)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.stdout.hasPrefix("resuming the rollout of \(good) at wave 1/2"), "\(resumed.stdout)")
        #expect(resumed.stdout.contains("ghost noReport"), "\(resumed.stdout)")
        #expect(record()["status"] as? String == "completed", "\(record())")
        #expect(Set(record()["applied"] as? [String] ?? []) == ["h1", "h2"], "\(record())")

        // Cancelled while ghost's wave waits: the rollout exits 4, ghost gets the good bundle
        // back, h1 and h2 never get the second.
        let second = try published("second", "0.3.0")
        let running = try start(second, wait: "5m")
        #expect(eventually { (try? broker.retained("servicehost/ghost/desired"))?.contains(second) == true })
        let cancel = try Self.fleet(["cancel"], broker, in: scratch.path)
        #expect(cancel.status == 0, "\(cancel.stderr)")
        let cancelled = running.wait()
        #expect(cancelled.status == 4, "\(cancelled.stdout)\(cancelled.stderr)")
        #expect(record()["status"] as? String == "cancelled", "\(record())")
        #expect(try broker.retained("servicehost/ghost/desired")?.contains(good) == true)
        for id in ["h1", "h2"] {
            #expect(try broker.retained("servicehost/\(id)/desired")?.contains(good) == true, "\(id)")
        }

        // Cancelled in one wave where h1 and h2 applied it and ghost is silent: only ghost is put
        // back; h1 and h2 keep the bundle their probation passed (no second deploy), and the
        // record counts them applied.
        let third = try published("third", "0.4.0")
        let wave = try start(third, wait: "5m", waves: "100%")
        for id in ["h1", "h2"] {
            #expect(FleetDesiredStateTests.report(broker, id, third, "applied")["status"] as? String == "applied")
        }
        let kept = try Self.fleet(["cancel"], broker, in: scratch.path)
        #expect(kept.status == 0 && kept.stdout.contains("applied: h1 h2"), "\(kept.stdout)\(kept.stderr)")
        #expect(wave.wait().status == 4)
        #expect(try broker.retained("servicehost/ghost/desired")?.contains(good) == true)
        for id in ["h1", "h2"] {
            #expect(try broker.retained("servicehost/\(id)/desired")?.contains(third) == true, "\(id)")
        }
        #expect(Set(record()["applied"] as? [String] ?? []) == ["h1", "h2"], "\(record())")
        let again = try Self.fleet(["cancel"], broker, in: scratch.path)
        #expect(again.status == 1 && again.stderr.contains("no rollout in progress"), "\(again.stderr)")
        let resume = try Self.fleet(["rollout", "--resume"], broker, in: scratch.path)
        #expect(resume.status == 1 && resume.stderr.contains("no rollout in progress"), "\(resume.stderr)")
        for host in hosts { host.stop() }
    }

    /// Health (issue 42's checks) in the reported state: a service that turns unhealthy between
    /// deploys is in `<prefix>/reported` with its health, and among `fleet status`'s failing
    /// services with the reason.
    @Test func aServiceTurningUnhealthy_isReported_andFailingInStatus() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let host = try FleetDesiredStateTests.fleetHost("h1", port: broker.port, key: key)
        let marker = host.scratch.file("sick")
        try host.probe(
            "watched",
            [
                "PROBE_ID=\"test.watched\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_HEALTH_CHECK))",
                "PROBE_HEALTH_MARKER=\"\(marker)\"",
            ])
        _ = try host.file(
            "lib/services.json",
            """
            {"trustedKeys": ["\(try key.publicKey)"],
             "services": {"test.watched": {"healthCheck": {"interval": 0.2, "unhealthyAfter": 2}},
              "\(FleetDesiredStateTests.bridge)": {"requests": "all", "settings":
              {"broker": "tcp://127.0.0.1:\(broker.port)", "hostId": "h1", "keepAlive": 5, "reportInterval": 0.5}}}}
            """)
        try host.start()
        #expect(MQTTBridgeTests.subscribed(broker, "h1"))
        // The host takes part: its own plugins, published and rolled out.
        let set = try scratch.folder("set")
        for file in ["libMQTTBridge.so", "probe.so", "watched.so"] {
            try FileManager.default.copyItem(atPath: host.lib + "/" + file, toPath: set + "/" + file)
        }
        _ = try scratch.copy(key.secretKeyFile, to: "release.key", mode: 0o600)
        let digest = try Self.fleet(["publish", "set", "--sign", "release.key"], broker, in: scratch.path).stdout
            .trimmingCharacters(in: .newlines)
        let rollout = try Self.fleet(
            ["rollout", digest, "--hosts", "h1", "--waves", "100%", "--wait", "2m", "--probation", "1s"], broker,
            in: scratch.path)
        #expect(rollout.status == 0, "\(rollout.stdout)\(rollout.stderr)")
        func watched() -> [String: Any]? {
            let services = FleetDesiredStateTests.reported(broker, "h1")["services"] as? [[String: Any]]
            return services?.first { $0["id"] as? String == "test.watched" }
        }
        #expect(eventually { (watched()?["health"] as? [String: Any])?["status"] as? String == "healthy" })
        #expect(FileManager.default.createFile(atPath: marker, contents: nil))
        #expect(eventually { (watched()?["health"] as? [String: Any])?["status"] as? String == "unhealthy" })
        let health = watched()?["health"] as? [String: Any]
        #expect(health?["reason"] as? String == "marker present", "\(String(describing: health))")
        let status = Self.json(try Self.fleet(["status", "--json"], broker, in: scratch.path).stdout)
        let row = (status["hosts"] as? [[String: Any]])?.first
        let failing = row?["failing"] as? [[String: Any]] ?? []
        #expect(failing.count == 1, "\(status)")
        #expect(failing.first?["service"] as? String == "test.watched", "\(status)")
        #expect(failing.first?["reason"] as? String == "unhealthy", "\(status)")
        #expect(failing.first?["detail"] as? String == "marker present", "\(status)")
        let table = try Self.fleet(["status"], broker, in: scratch.path).stdout
        #expect(table.contains("test.watched (unhealthy)"), "\(table)")
        host.stop()
    }

    /// The bridge's credentials options: a broker that takes only a user gets `--username` and
    /// `--password-file`; a password file others may read is refused, naming it and its mode.
    @Test func credentials_areTheBridges() throws {
        let scratch = try Scratch()
        let passwords = scratch.file("passwd")
        let made = try Command.run("/usr/bin/mosquitto_passwd", ["-b", "-c", passwords, "operator", "s3cret"])
        try #require(made.status == 0, "\(made.stderr)")
        chmod(passwords, 0o644)
        let broker = try Mosquitto(in: scratch, config: "allow_anonymous false\npassword_file \(passwords)")
        let secret = try scratch.write("secret", Array("s3cret\n".utf8), mode: 0o600)
        let anonymous = try Self.fleet(["status"], broker, in: scratch.path)
        #expect(anonymous.status == 1 && anonymous.stderr.contains("refused"), "\(anonymous.stderr)")
        let ok = try Self.fleet(
            ["status", "--json", "--username", "operator", "--password-file", secret], broker, in: scratch.path)
        #expect(ok.status == 0 && Self.json(ok.stdout)["hosts"] is [Any], "\(ok.stdout)\(ok.stderr)")
        chmod(secret, 0o640)
        let open = try Self.fleet(
            ["status", "--username", "operator", "--password-file", secret], broker, in: scratch.path)
        #expect(open.status == 1 && open.stderr.contains(secret) && open.stderr.contains("0640"), "\(open.stderr)")
    }

    /// A `.tar` signed elsewhere is published with its `.minisig` once the signature verifies with
    /// `--key` (the public key file or its line) or `--config` (the hosts' `trustedKeys`); one
    /// without it, unchecked, signed by another key, changed after signing, or that the hosts
    /// would refuse (a link), is refused naming the file and the reason, and nothing is published.
    @Test func aTarSignedElsewhere_isPublishedWithItsSignature_andABadOneIsRefused() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let other = try Minisign.generate("other", in: scratch.path)
        let set = try scratch.folder("set")
        _ = try scratch.write("set/libA.so", Array("plugin".utf8))
        let tar = scratch.file("bundle.tar")
        let made = try Command.run("/usr/bin/tar", ["--format=ustar", "-cf", tar, "-C", set, "libA.so"])
        try #require(made.status == 0, "\(made.stderr)")
        let sum = String(try Command.run("/usr/bin/sha256sum", [tar]).stdout.prefix(64))
        let unsigned = try Self.fleet(["publish", "bundle.tar", "--key", key.publicKeyFile], broker, in: scratch.path)
        #expect(unsigned.status == 1 && unsigned.stderr.contains("bundle.tar.minisig"), "\(unsigned.stderr)")
        try Minisign.sign(tar, with: key)
        // Not checked: refused, naming the signature file and the options that check it.
        let unchecked = try Self.fleet(["publish", "bundle.tar"], broker, in: scratch.path)
        #expect(
            unchecked.status == 1 && unchecked.stderr.contains("bundle.tar.minisig")
                && unchecked.stderr.contains("--key"), "\(unchecked.stderr)")
        // Another key's: refused with the hosts' reason, nothing published.
        let keyID = try key.keyID
        let untrusted = try Self.fleet(
            ["publish", "bundle.tar", "--key", other.publicKeyFile], broker, in: scratch.path)
        #expect(
            untrusted.status == 1 && untrusted.stderr.contains("bundle.tar.minisig")
                && untrusted.stderr.contains("untrustedKey") && untrusted.stderr.contains(keyID),
            "\(untrusted.stderr)")
        // Nothing published: a rollout of it finds no manifest (asked this way, not with
        // `mosquitto_sub -W`, whose timer never fires under the test runner's signal mask).
        let none = try Self.fleet(["rollout", sum, "--hosts", "h*"], broker, in: scratch.path)
        #expect(none.status == 1 && none.stderr.contains("no bundle published"), "\(none.stderr)")
        let published = try Self.fleet(
            ["publish", "bundle.tar", "--key", try key.publicKey], broker, in: scratch.path)
        #expect(published.status == 0, "\(published.stderr)")
        #expect(published.stdout == sum + "\n")
        let manifest = Self.json(try broker.retained("servicehost/manifests/\(sum)") ?? "")
        #expect(manifest["signature"] as? String == (try String(contentsOfFile: tar + ".minisig", encoding: .utf8)))
        #expect(try broker.retained("servicehost/bundles/\(sum)") != nil)
        // The hosts' configuration: their trusted keys.
        _ = try scratch.write(
            "services.json", Array(#"{"trustedKeys": ["\#(try key.publicKey)"], "services": {}}"#.utf8))
        let configured = try Self.fleet(
            ["publish", "bundle.tar", "--config", "services.json"], broker, in: scratch.path)
        #expect(configured.status == 0 && configured.stdout == sum + "\n", "\(configured.stderr)")
        // Changed after it was signed: the signature does not verify.
        _ = try scratch.write("set/libA.so", Array("plugin, changed".utf8))
        let changed = try Command.run("/usr/bin/tar", ["--format=ustar", "-cf", tar, "-C", set, "libA.so"])
        try #require(changed.status == 0, "\(changed.stderr)")
        let mismatch = try Self.fleet(["publish", "bundle.tar", "--key", key.publicKeyFile], broker, in: scratch.path)
        #expect(
            mismatch.status == 1 && mismatch.stderr.contains("bundle.tar.minisig")
                && mismatch.stderr.contains("signatureMismatch"), "\(mismatch.stderr)")
        _ = try Command.run("/usr/bin/ln", ["-s", "/etc/passwd", set + "/link.so"])
        _ = try Command.run(
            "/usr/bin/tar", ["--format=ustar", "-cf", scratch.file("linked.tar"), "-C", set, "libA.so", "link.so"])
        try Minisign.sign(scratch.file("linked.tar"), with: key)
        let linked = try Self.fleet(["publish", "linked.tar", "--key", key.publicKeyFile], broker, in: scratch.path)
        #expect(linked.status == 1 && linked.stderr.contains("(link)"), "\(linked.stderr)")
        let folder = try Self.fleet(["publish", "set", "--sign", key.secretKeyFile], broker, in: scratch.path)
        #expect(folder.status == 1 && folder.stderr.contains("link.so"), "\(folder.stderr)")
    }

    /// A secret key with a password (a real `minisign -G`): `--key-password-file` gives it to
    /// minisign (the file refused when others may read it); without it, and no terminal, the
    /// refusal says how to give it; a wrong one is minisign's refusal. A signature made with a
    /// key `--key` does not name is refused before anything is published.
    @Test func aKeyWithAPassword_signsWithThePasswordFile() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let tool = try #require(Minisign.installed)
        let made = try Command.run(
            "/bin/sh", ["-c", "printf 's3cret\\ns3cret\\n' | \"$0\" -G -f -p locked.pub -s locked.key", tool],
            directory: scratch.path)
        try #require(made.status == 0, "\(made.stdout)\(made.stderr)")
        let other = try Minisign.generate("other", in: scratch.path)
        _ = try scratch.folder("set")
        _ = try scratch.write("set/libA.so", Array("plugin".utf8))
        let password = try scratch.write("password", Array("s3cret\n".utf8), mode: 0o600)
        let wrong = try scratch.write("wrong", Array("guess\n".utf8), mode: 0o600)

        let asked = try Self.fleet(["publish", "set", "--sign", "locked.key"], broker, in: scratch.path)
        #expect(asked.status == 1 && asked.stderr.contains("--key-password-file"), "\(asked.stderr)")
        let refused = try Self.fleet(
            ["publish", "set", "--sign", "locked.key", "--key-password-file", wrong], broker, in: scratch.path)
        #expect(refused.status == 1 && refused.stderr.contains("Wrong password"), "\(refused.stderr)")
        chmod(password, 0o644)
        let open = try Self.fleet(
            ["publish", "set", "--sign", "locked.key", "--key-password-file", password], broker, in: scratch.path)
        #expect(open.status == 1 && open.stderr.contains(password) && open.stderr.contains("0644"), "\(open.stderr)")
        chmod(password, 0o600)
        let signed = try Self.fleet(
            ["publish", "set", "--sign", "locked.key", "--key-password-file", password, "--key", "locked.pub"],
            broker, in: scratch.path)
        #expect(signed.status == 0, "\(signed.stderr)")
        let digest = signed.stdout.trimmingCharacters(in: .newlines)
        let manifest = Self.json(try broker.retained("servicehost/manifests/\(digest)") ?? "")
        #expect((manifest["signature"] as? String)?.hasPrefix("untrusted comment:") == true, "\(manifest)")
        // Signed here, but the hosts trust another key: refused, nothing published.
        _ = try scratch.write("set/libB.so", Array("another plugin".utf8))
        let mistrusted = try Self.fleet(
            [
                "publish", "set", "--sign", "locked.key", "--key-password-file", password, "--key",
                other.publicKeyFile,
            ], broker, in: scratch.path)
        #expect(mistrusted.status == 1 && mistrusted.stderr.contains("untrustedKey"), "\(mistrusted.stderr)")
    }

    /// Hosts whose bridges have a `prefix` of their own (`kiosks/<id>`): `--prefix kiosks` finds
    /// them, rolls out to them and shows them; without it they are not seen.
    @Test func hostsUnderAnotherPrefix_areFoundWithPrefix() throws {
        let scratch = try Scratch()
        let broker = try Mosquitto(in: scratch)
        let key = try Minisign.generate("release", in: scratch.path)
        let host = try FleetDesiredStateTests.fleetHost("k1", port: broker.port, key: key, prefix: "kiosks/k1")
        try host.start()
        #expect(eventually { (try? broker.retained("kiosks/k1/state"))?.contains("online") == true })
        let unseen = Self.json(try Self.fleet(["status", "--json"], broker, in: scratch.path).stdout)
        #expect((unseen["hosts"] as? [Any])?.isEmpty == true, "\(unseen)")
        _ = try Self.bundleFolder(for: host, in: scratch, name: "bundle", version: "0.2.0", crashing: false)
        let digest = try Self.fleet(
            ["publish", "bundle", "--sign", key.secretKeyFile, "--key", key.publicKeyFile], broker, in: scratch.path
        ).stdout.trimmingCharacters(in: .newlines)
        let rollout = try Self.fleet(
            [
                "rollout", digest, "--hosts", "k*", "--waves", "100%", "--wait", "1m", "--probation", "1s", "--prefix",
                "kiosks",
            ],
            broker, in: scratch.path)
        #expect(
            rollout.status == 0 && rollout.stdout.contains("1 applied, 0 failed"), "\(rollout.stdout)\(rollout.stderr)")
        #expect(try broker.retained("kiosks/k1/desired")?.contains(digest) == true)
        let seen = Self.json(
            try Self.fleet(["status", "--json", "--prefix", "kiosks"], broker, in: scratch.path).stdout)
        let rows = seen["hosts"] as? [[String: Any]] ?? []
        #expect(rows.map { $0["host"] as? String } == ["k1"], "\(seen)")
        #expect(rows.first?["status"] as? String == "applied" && rows.first?["online"] as? Bool == true, "\(seen)")
        let bad = try Self.fleet(["status", "--prefix", "kiosks/+"], broker, in: scratch.path)
        #expect(bad.status == 2 && bad.stderr.contains("kiosks/+"), "\(bad.stderr)")
        host.stop()
    }

    /// Bad input is refused before anything is sent, naming the thing.
    @Test func badArguments_areRefusedNamingTheThing() throws {
        let host = try Repository.product("host")
        let cases: [([String], String)] = [
            (["rollout", "abc", "--hosts", "h*"], "'abc'"),
            (["rollout", String(repeating: "a", count: 64), "--hosts", "h*", "--waves", "1,many"], "'many'"),
            (["rollout", String(repeating: "a", count: 64), "--hosts", "h*", "--waves", "50%,10%"], "'10%'"),
            (["rollout", String(repeating: "a", count: 64)], "--hosts"),
            (["rollout", String(repeating: "a", count: 64), "--hosts", "h*", "--wait", "soon"], "'soon'"),
            (["publish"], "publish"), (["deploy"], "'deploy'"), (["status", "--broker", "http://x"], "http://x"),
        ]
        for (arguments, named) in cases {
            let result = try Command.run(host, ["fleet"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(named), "\(arguments): \(result.stderr)")
        }
        // Nothing listens there: an error naming the address, status 1.
        let port = Mosquitto.freePort()
        let unreachable = try Command.run(host, ["fleet", "status", "--broker", "tcp://127.0.0.1:\(port)"])
        #expect(unreachable.status == 1 && unreachable.stderr.contains("127.0.0.1:\(port)"), "\(unreachable.stderr)")
        let scratch = try Scratch()
        let missing = try Command.run(host, ["fleet", "publish", scratch.file("nowhere"), "--sign", "k"])
        #expect(missing.status == 1 && missing.stderr.contains("nowhere"), "\(missing.stderr)")
    }
}
