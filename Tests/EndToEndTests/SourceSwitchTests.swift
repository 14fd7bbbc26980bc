import Foundation
import TestSupport
import Testing

/// The configuration's `"sources"` (issue 38): a source switched off in `services.json` is off
/// with that reason, `--source` wins over it, and `host check` shows both and names a wrong key.
@Suite(.timeLimit(.minutes(10)))
struct SourceSwitchTests {
    static func reason(_ records: [LogRecord], _ source: String) -> (on: Bool, reason: String?)? {
        guard
            let record = records.first(where: {
                ($0.event == LogEvent.sourceOn.name || $0.event == LogEvent.sourceOff.name)
                    && $0.string("source") == source
            })
        else { return nil }
        return (record.event == LogEvent.sourceOn.name, record.string("reason"))
    }

    @Test func aSourceOffInTheConfiguration_isOff_andTheOptionWins() throws {
        let host = try RunningHost()
        try host.file("lib/services.json", #"{"sources": {"network": "off", "lock": "off"}}"#)
        try host.start(["--source", "lock=on"])
        let records = host.stop().records
        let network = try #require(Self.reason(records, "network"))
        #expect(!network.on && network.reason == #"turned off ("sources": {"network": "off"} in the configuration)"#)
        // The option wins: lock runs if it can, and is never "turned off".
        let lock = try #require(Self.reason(records, "lock"))
        #expect(lock.reason?.hasPrefix("turned off") == false)

        let check = try Command.run(try Repository.product("host"), ["check", "--plugins", host.lib])
        #expect(
            lines(check.stdout, containing: "source network: ")
                == [#"source network: off (turned off ("sources": {"network": "off"} in the configuration))"#])
        let checkWithOption = try Command.run(
            try Repository.product("host"), ["check", "--plugins", host.lib, "--source", "network=on"])
        #expect(
            lines(checkWithOption.stdout, containing: "source network: ").first?.hasPrefix("source network: on") == true
        )
    }

    @Test func aWrongSourceName_isAnErrorOfHostCheckNamingTheKey() throws {
        let host = try RunningHost()
        try host.file("lib/services.json", #"{"sources": {"netwrk": "off"}}"#)
        let check = try Command.run(try Repository.product("host"), ["check", "--plugins", host.lib])
        #expect(check.status == 2)
        let output = check.stdout + check.stderr
        #expect(output.contains(#"sources.netwrk: unknown key (did you mean "network"?)"#), "\(output)")
    }
}
