import Foundation
import HostCore
import TestSupport
import Testing

/// Atomicity under `kill -9`: a child process writes one key in a tight loop, alternating two
/// large values of different lengths, and is killed at random moments; after every kill the key
/// must hold one of the two values whole.
///
/// The child is this test binary run again for ``crashChild_writesOneKeyUntilKilled(_:)`` alone,
/// so it exercises the very `ServiceStore` code under test.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct StoreCrashTests {
    static let childVariable = "SERVICEHOST_STORE_CRASH_CHILD"
    static let serviceID = "test.crash"
    static let valueA = [UInt8](repeating: UInt8(ascii: "A"), count: 256 << 10)
    static let valueB = [UInt8](repeating: UInt8(ascii: "B"), count: 192 << 10)

    /// Runs only in the child process (the variable names its state directory): writes until killed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func crashChild_writesOneKeyUntilKilled() throws {
        let path = ProcessInfo.processInfo.environment[Self.childVariable]!
        let store = try StateDirectory(path: path).store(for: Self.serviceID)
        // Start with the value the key does not hold, so each child's first write changes it.
        var writeA = try store.get("key") != Self.valueA
        while true {
            try store.set("key", to: writeA ? Self.valueA : Self.valueB)
            writeA.toggle()
        }
    }

    @Test func aKeyWrittenInATightLoop_holdsAWholeValueAfterEachKill9() throws {
        let scratch = try Scratch()
        let statePath = scratch.file("state")
        let keyPath = statePath + "/services/\(Self.serviceID)/key"
        let rounds = 50
        var killedMidWrite = 0
        var seen: Set<UInt8> = []
        for round in 0..<rounds {
            let before = inode(keyPath)
            let child = try ChildProcess.rerunningThisTestBinary(
                test: "StoreCrashTests/crashChild_writesOneKeyUntilKilled()",
                environment: [Self.childVariable: statePath])
            // Wait for this child's first complete write (a rename gives the key a new inode),
            // then let it run on for a random moment, mid-write or between writes.
            let wrote = eventually(within: 60) { inode(keyPath) != nil && inode(keyPath) != before || child.hasExited }
            #expect(
                wrote && !child.hasExited, "round \(round): the child did not write: \(child.kill9AndWait().stderr)")
            usleep(UInt32.random(in: 0...20_000))
            let result = child.kill9AndWait()
            #expect(result.status == 128 + SIGKILL, "round \(round): \(result.stderr)")

            let leftovers = try FileManager.default.contentsOfDirectory(
                atPath: statePath + "/services/\(Self.serviceID)"
            )
            .filter { $0.hasPrefix(".tmp-") }
            if !leftovers.isEmpty { killedMidWrite += 1 }
            let store = try StateDirectory(path: statePath).store(for: Self.serviceID)
            let value = try #require(try store.get("key"), "round \(round): the key has no value")
            #expect(
                value == Self.valueA || value == Self.valueB,
                "round \(round): a mixed value of \(value.count) bytes, starting \(value.first ?? 0)")
            seen.insert(value[0])
            // Opening the store removed what the kill left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.path) == ["key"])
        }
        // Both values were seen, so the children really wrote; how many kills landed
        // between the temporary file's creation and the rename is luck, so it is only reported.
        #expect(seen == [UInt8(ascii: "A"), UInt8(ascii: "B")])
        print("StoreCrashTests: \(killedMidWrite) of \(rounds) kills left a temporary file behind")
    }

    private func inode(_ path: String) -> ino_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_ino : nil
    }
}
