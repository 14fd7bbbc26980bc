// Fuzz target `state`: what a host reads back from its state directory, which a full disk, a
// crash mid-write or a hand edit can leave damaged: a crash loop's failure record
// (`failures/<id>.json`, read at every start that isolates), the crash sentinel an unclean
// exit left (`sentinel`, read at the next start), the notification authorization
// (`notifications/authorization.json`) and a scene's restoration activity
// (`scenes/<name>.json`). scripts/fuzz builds it.
import ServiceJSON

@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // As FailureStore.record(for:) reads a record: the JSON, then its fields. What it accepts
    // is said in a sentence, blocks its own file, and is written back to the same record.
    if let value = try? JSONValue(parsing: bytes), let record = FailureRecord(json: value) {
        guard !record.summary.isEmpty, record.blocks(record.file) else { fatalError("state: a record that blocks nothing") }
        guard FailureRecord(json: record.json) == record else { fatalError("state: a record does not read back: \(record)") }
    }
    // The authorization as NotificationAuthorization reads it: what it accepts writes back the same.
    if let value = try? JSONValue(parsing: bytes), let settings = NotificationAuthorization.Settings(json: value) {
        guard NotificationAuthorization.Settings(json: settings.json) == settings else { fatalError("state: an authorization does not read back") }
    }
    // A restoration activity as a scene's connection reads it: an activity, or a refusal that says why.
    // (libFuzzer calls this on the main thread.)
    MainActor.assumeIsolated {
        do throws(InputError) { _ = try SceneRestorations.activity(bytes) } catch {
            guard !error.message.isEmpty else { fatalError("state: a refused activity without a reason") }
        }
    }
    // As Sentinel.open reads the previous run's sentinel (the file's first 64 KiB).
    if let run = Sentinel.decode(bytes), run.description.isEmpty { fatalError("state: a sentinel without a sentence") }
    return 0
}
