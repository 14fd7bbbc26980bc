import Foundation
import Testing

@testable import HostCore

/// journald's stream convention: `<N>` priority prefixes only when stderr is the journal.
@Suite struct JournalTests {
    @Test func linesGetTheirPriorityPrefix_onlyWhenTheDescriptorIsTheJournalStream() throws {
        let path = NSTemporaryDirectory() + "/servicehost-journal-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        var info = stat()
        fstat(fd, &info)
        let stream = "\(info.st_dev):\(info.st_ino)"
        #expect(Journal.isStream(fd, environment: stream))
        #expect(!Journal.isStream(fd, environment: "\(info.st_dev):\(info.st_ino + 1)"))
        #expect(!Journal.isStream(fd, environment: nil))
        #expect(!Journal.isStream(fd, environment: "garbage"))
        let log = Log(level: .debug, descriptor: fd, journal: Journal.isStream(fd, environment: stream))
        log.error("host", "broken", event: .hostLoadFailed)
        log.warn("host", "odd")
        log.info("host", "fine")
        log.debug("host", "detail")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == "<3>error [host] broken\n<4>warn [host] odd\n<6>info [host] fine\n<7>debug [host] detail\n")
    }
}
