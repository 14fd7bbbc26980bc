import Glibc
import Testing

@testable import HostCore

/// The time source's parts that need no clock to be set: the next local midnight, in a zone with
/// daylight saving, and the reading of inotify's records.
@Suite(.serialized) struct TimeSourcePartsTests {
    /// Runs `body` with the process's zone `zone` (TZ), then restores it.
    private func inZone(_ zone: String, _ body: () -> Void) {
        let old = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        body()
        if let old { setenv("TZ", old, 1) } else { unsetenv("TZ") }
        tzset()
    }

    @Test func theNextMidnight_isLocal_andADaylightSavingDayIsShorter() {
        inZone("Europe/Paris") {
            // 2026-03-28 12:00 UTC is 13:00 in Paris; that night's midnight is 23:00 UTC.
            #expect(TimeSource.nextMidnight(after: 1_774_699_200) == 1_774_738_800)
            // Exactly at midnight: the next one, 23 hours later (clocks go forward on the 29th).
            #expect(TimeSource.nextMidnight(after: 1_774_738_800) == 1_774_738_800 + 23 * 3600)
        }
        inZone("UTC") { #expect(TimeSource.nextMidnight(after: 86_400 * 3 + 5) == 86_400 * 4) }
    }

    @Test func inotifyRecords_giveTheirNames_andACutRecordIsAnError() throws {
        func record(_ name: String, padded: Int) -> [UInt8] {
            let length = UInt32(padded)
            return [UInt8](repeating: 0, count: 12) + withUnsafeBytes(of: length.littleEndian) { Array($0) }
                + Array(name.utf8) + [UInt8](repeating: 0, count: padded - name.utf8.count)
        }
        let bytes = record("localtime", padded: 16) + record("", padded: 0) + record("hosts", padded: 16)
        #expect(try InotifyRecords.names(in: bytes[...]) == ["localtime", "", "hosts"])
        #expect(throws: InotifyRecords.Malformed.self) { try InotifyRecords.names(in: bytes.dropLast()[...]) }
        #expect(throws: InotifyRecords.Malformed.self) { try InotifyRecords.names(in: bytes.prefix(10)) }
    }
}
