import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The text log format keeps one line per call: the bytes written, not a sentence.
@Suite struct LogTextTests {
    /// Writes `message` through a text log into a file and returns the file's bytes.
    private func written(_ message: String) throws -> [UInt8] {
        let scratch = try Scratch()
        let path = scratch.file("log.txt")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        Log(level: .info, format: .text, descriptor: descriptor, journal: false).warn("host", message, event: "test.event")
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Every newline in the message becomes a space; the LF of a CR LF pair is kept (it was one
    /// Character when lines were built per Character); other bytes pass through unchanged.
    @Test func aMessageWithNewlinesStaysOnOneLine() throws {
        #expect(try written("a\nb\r\nc\n\né") == Array("warn [host] a b\r\nc  é\n".utf8))
        #expect(try written("\nfirst") == Array("warn [host]  first\n".utf8))
        #expect(try written("plain") == Array("warn [host] plain\n".utf8))
    }
}
