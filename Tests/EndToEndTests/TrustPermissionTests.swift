import Foundation
import TestSupport
import Testing

/// The permission rule for everything that grants trust (issue 11): the configuration file
/// (it can mark services trusted) and the state directory are refused, naming the path, when
/// another user could change them or any directory on their path; `--allow-insecure-plugins`
/// lifts the rule, as it does for plugin files.
@Suite struct TrustPermissionTests {
    /// `path` as the host names it: symlinks resolved, `//` folded.
    private func resolved(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }

    private static let config = #"{"services": {"test.a": {"trusted": true, "settings": {"from": "config"}}}}"#

    /// A host with one probe and a configuration file at `conf/services.json`.
    private func host(configMode: Int = 0o644, folderMode: Int = 0o755) throws -> (RunningHost, String) {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let folder = try host.scratch.folder("conf", mode: folderMode)
        try FileManager.default.setAttributes([.posixPermissions: folderMode], ofItemAtPath: folder)  // past the umask
        let config = try host.scratch.write("conf/services.json", Array(Self.config.utf8), mode: configMode)
        return (host, config)
    }

    @Test(.timeLimit(.minutes(10))) func aGroupWritableConfiguration_isRefusedNamingIt_unlessAllowed() throws {
        let (host, config) = try host(configMode: 0o664)
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--config", config,
                "--state-dir", host.stateDirectory,
            ])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "\(config): refused: configuration file \(resolved(config)) is writable by its group (mode 0664)"
                    + " (fix the permissions, or pass --allow-insecure-plugins)"), "\(result.stderr)")

        try host.start(["--config", config, "--allow-insecure-plugins"])
        #expect(try host.ctlJSON("list").reply["services"] as? [[String: Any]] != nil)
        _ = host.stop()
        #expect(
            host.records.messages(from: "test.a").contains { $0.contains(#"settings={"from":"config"}"#) },
            "\(host.records.text)")
    }

    @Test(.timeLimit(.minutes(10))) func aConfigurationInAWorldWritableFolder_isRefusedNamingTheFolder() throws {
        let (host, config) = try host(folderMode: 0o777)
        let folder = resolved(host.scratch.file("conf"))
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--config", config,
                "--state-dir", host.stateDirectory,
            ])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "refused: directory \(folder) is writable by other users (mode 0777),"
                    + " on the path of configuration file \(resolved(config))"), "\(result.stderr)")
    }

    @Test(.timeLimit(.minutes(10))) func theDefaultServicesJSON_followsTheSameRule() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let config = try host.scratch.write("lib/services.json", Array(Self.config.utf8), mode: 0o646)
        let result = try Command.run(
            try Repository.product("host"), ["--plugins", host.lib, "--state-dir", host.stateDirectory])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "refused: configuration file \(resolved(config)) is writable by other users (mode 0646)"),
            "\(result.stderr)")
    }

    @Test(.timeLimit(.minutes(10))) func aStateDirectoryUnderAGroupWritableFolder_isRefusedNamingIt_unlessAllowed()
        throws
    {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let parent = try host.scratch.folder("shared")
        try FileManager.default.setAttributes([.posixPermissions: 0o775], ofItemAtPath: parent)
        let state = parent + "/state"
        let result = try Command.run(try Repository.product("host"), ["--plugins", host.lib, "--state-dir", state])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "\(state): refused: directory \(resolved(parent)) is writable by its group (mode 0775),"
                    + " on the path of state directory \(resolved(state))"), "\(result.stderr)")

        try host.start(["--state-dir", state, "--allow-insecure-plugins"])
        #expect(try host.ctl("state").stdout.contains("state: active"))
        #expect(host.stop().status == 0)
    }

    /// Issue 36 item 14: a state directory another user owns is refused with the fix for
    /// ownership (`chown`), not `chmod go-w`, which changes nothing about who owns it.
    @Test(.timeLimit(.minutes(10))) func aStateDirectoryAnotherUserOwns_isRefusedSuggestingChown() throws {
        guard geteuid() == 0 else {
            print("skipped: not root: cannot give a directory to another user")
            return
        }
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let state = try host.scratch.folder("theirs")
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state)
        #expect(chown(state, 65534, 65534) == 0)  // nobody
        let result = try Command.run(
            try Repository.product("host"), ["--plugins", host.lib, "--state-dir", state, "--log-format", "json"])
        #expect(result.status == 2)
        let failed = result.records.named(.hostStateDirectoryFailed)
        #expect(
            failed.map { [$0.string("path"), $0.int("errno").map(String.init)] } == [[state, "0"]], "\(result.stderr)")
        let message = failed.first?.message ?? ""
        #expect(message.contains("is owned by uid 65534"), "\(message)")
        #expect(message.contains("chown 0") && !message.contains("chmod"), "\(message)")
    }
}
