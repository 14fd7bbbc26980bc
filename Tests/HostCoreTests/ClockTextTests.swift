import Glibc
import Testing

@testable import HostCore

/// Wall times as text: the same text strftime gives, without strftime's time-zone set-up.
@Suite struct ClockTextTests {
    private func strftimeText(_ seconds: Int) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func isoTextIsStrftimes() {
        #expect(Clock.iso(seconds: 1_763_785_800) == "2025-11-22T04:30:00Z")
        // The epoch, a leap day, the last second of 9999, before 1000 and after 9999 (strftime's
        // own path), a garbage value a corrupt sentinel could hold.
        for seconds in [0, 951_782_400, 253_402_300_799, -30_610_224_000, 253_402_300_800, Int.max / 2, -1, 59, 86_399]
        {
            #expect(Clock.iso(seconds: seconds) == strftimeText(seconds), "\(seconds)")
        }
    }
}
