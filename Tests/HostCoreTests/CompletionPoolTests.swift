import Foundation
import ServiceABI
import Synchronization
import TestSupport
import Testing

@testable import HostCore

/// Completions: exactly once, a second or late call detected and logged, and memory reused.
@Suite struct CompletionPoolTests {
    /// A JSON log written to a file, read back as its `event` names.
    final class LogFile {
        let scratch: Scratch
        let path: String
        let log: Log

        init() throws {
            scratch = try Scratch()
            path = scratch.file("log.jsonl")
            log = Log(
                level: .debug, format: .json, descriptor: open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600))
        }

        var events: [String] {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["event"] as? String
            }
        }
    }

    /// Records the answers a completion delivered.
    final class Answers: Sendable {
        let results = Locked<[Int32]>([])
        var all: [Int32] { results.withLock { $0 } }
    }

    private func record(_ pool: CompletionPool, _ log: Log, _ answers: Answers, id: UInt64 = 1) -> CompletionRecord {
        CompletionRecord(
            answerID: id, serviceID: "test.a", event: .didReceiveRemoteNotification, seq: id, log: log,
            pool: pool
        ) { _, result, _ in answers.results.withLock { $0.append(result) } }
    }

    @Test func aSecondCall_isIgnoredAndLogged() throws {
        let file = try LogFile()
        let answers = Answers()
        let pool = CompletionPool(quarantine: 4)
        let completion = record(pool, file.log, answers)
        pool.complete(completion.table, Int32(SH_FETCH_NEW_DATA), nil)
        pool.complete(completion.table, Int32(SH_FETCH_FAILED), nil)
        #expect(answers.all == [Int32(SH_FETCH_NEW_DATA)])
        #expect(file.events == [LogEvent.completionTwice.name])
    }

    @Test func aCallAfterTheDeadline_isIgnoredAndLogged() throws {
        let file = try LogFile()
        let answers = Answers()
        let pool = CompletionPool(quarantine: 4)
        let completion = record(pool, file.log, answers)
        #expect(completion.expire())
        #expect(!completion.expire())
        pool.complete(completion.table, Int32(SH_FETCH_NEW_DATA), nil)
        #expect(answers.all.isEmpty)
        #expect(file.events == [LogEvent.completionLate.name])
    }

    @Test func answeredSlots_areReused_afterTheQuarantine_soThePoolStaysBounded() throws {
        let file = try LogFile()
        let answers = Answers()
        let pool = CompletionPool(quarantine: 8)
        for id in 1...10_000 {
            let completion = record(pool, file.log, answers, id: UInt64(id))
            if id % 2 == 0 { pool.complete(completion.table, 0, nil) } else { #expect(completion.expire()) }
        }
        #expect(answers.all.count == 5000)
        #expect(pool.capacity == 9)  // the quarantine plus the one in use
        #expect(file.events.isEmpty)
    }

    /// A worker's slot relays every call after the first to the host (which logs it there)
    /// instead of logging it in the worker.
    @Test func aSlotWithARelay_passesLaterCallsOn() throws {
        final class Target: CompletionTarget {
            let answers = Answers()
            func answered(_ result: Int32, _ json: [UInt8]?) { answers.results.withLock { $0.append(result) } }
        }
        let file = try LogFile()
        let relayed = Answers()
        let target = Target()
        let pool = CompletionPool(quarantine: 4)
        let (slot, table) = pool.acquire(serviceID: "test.a", event: .willPresentNotification, log: file.log) {
            result, _ in
            relayed.results.withLock { $0.append(result) }
        }
        pool.attach(target, to: slot)
        pool.complete(table, 1, nil)
        pool.complete(table, 2, nil)
        pool.complete(table, 3, nil)
        #expect(target.answers.all == [1])
        #expect(relayed.all == [2, 3])
        #expect(file.events.isEmpty)
    }

    /// A completion kept (by value, as a worker's relay keeps it) past its slot's reuse is
    /// recognised by its generation: it never answers the slot's new event.
    @Test func aCopyOfAReusedCompletion_neverAnswersTheNewEvent() throws {
        let file = try LogFile()
        let answers = Answers()
        let pool = CompletionPool(quarantine: 1)
        let first = record(pool, file.log, answers, id: 1)
        var stale = first.table.pointee
        pool.complete(first.table, 0, nil)
        pool.complete(record(pool, file.log, answers, id: 2).table, 0, nil)
        let reuser = record(pool, file.log, answers, id: 3)
        #expect(reuser.table == first.table)  // the first slot's memory, reused
        withUnsafePointer(to: &stale) { pool.complete($0, 7, nil) }
        #expect(answers.all == [0, 0])
        pool.complete(reuser.table, 1, nil)
        #expect(answers.all == [0, 0, 1])
        #expect(file.events == [LogEvent.completionStale.name])
    }
}
