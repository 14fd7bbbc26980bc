import Foundation
import TestSupport
import Testing

@testable import HostCore

/// The text log format keeps one line per call: the bytes written, not a sentence.
@Suite struct LogTextTests {
    /// Writes `message` through a text log into a file and returns the file's bytes.
    private func written(_ message: String, format: LogFormat = .text, _ fields: LogField...) throws -> [UInt8] {
        let scratch = try Scratch()
        let path = scratch.file("log.txt")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        Log(level: .info, format: format, descriptor: descriptor, journal: false).write(
            .warn, "host", message, event: .firstLaunchUnrecorded, fields: fields)
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Every newline in the message becomes a space; the LF of a CR LF pair is kept (it was one
    /// Character when lines were built per Character); other bytes pass through unchanged.
    @Test func aMessageWithNewlinesStaysOnOneLine() throws {
        #expect(try written("a\nb\r\nc\n\né") == Array("warn [host] a b\r\nc  é\n".utf8))
        #expect(try written("\nfirst") == Array("warn [host]  first\n".utf8))
        #expect(try written("plain") == Array("warn [host] plain\n".utf8))
    }

    /// Fields are encoded when a JSON line is written (not when they are made): values that need
    /// escaping come back as they were, and a text line carries none of them.
    @Test func fieldsNeedingEscapes_areWrittenInJSONLines_andLeftOutOfTextLines() throws {
        let odd = ["quote \" and \\ backslash", "new\nline\ttab", "\u{1}control é", ""]
        let fields: [LogField] = [.strings("services", odd), .string("path", odd[0]), .int("errno", -3)]
        let text = try written("ready", format: .text, fields[0], fields[1], fields[2])
        #expect(text == Array("warn [host] ready\n".utf8))
        let json = try written("ready", format: .json, fields[0], fields[1], fields[2])
        #expect(json.last == 0x0A && json.filter { $0 == 0x0A }.count == 1)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        let written = try #require(line["fields"] as? [String: Any])
        #expect(written["services"] as? [String] == odd)
        #expect(written["path"] as? String == odd[0])
        #expect(written["errno"] as? Int == -3)
        #expect(
            line["message"] as? String == "ready" && line["event"] as? String == LogEvent.firstLaunchUnrecorded.name)
    }
}
