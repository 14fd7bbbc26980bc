// Fuzz target `state`: what a host reads back from its state directory, which a full disk, a
// crash mid-write or a hand edit can leave damaged: a crash loop's failure record
// (`failures/<id>.json`, read at every start that isolates), the crash sentinel an unclean
// exit left (`sentinel`, read at the next start), the notification authorization
// (`notifications/authorization.json`) and a scene's restoration activity
// (`scenes/<name>.json`); and the names a host reads back from its folders: a store's keys
// (`store/<service>/`), the copy store's version folders (`KEY`, read by eviction) and plugin
// file names, which are bytes. scripts/fuzz builds it.
import Glibc
import ServiceJSON

@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // As FailureStore.record(for:) reads a record: the JSON, then its fields. What it accepts
    // is said in a sentence, blocks its own file, and is written back to the same record.
    if let value = try? JSONValue(parsing: bytes), let record = FailureRecord(json: value) {
        guard !record.summary.isEmpty, record.blocks(record.file) else {
            fatalError("state: a record that blocks nothing")
        }
        guard FailureRecord(json: record.json) == record else {
            fatalError("state: a record does not read back: \(record)")
        }
    }
    // The authorization as NotificationAuthorization reads it: what it accepts writes back the same.
    if let value = try? JSONValue(parsing: bytes), let settings = NotificationAuthorization.Settings(json: value) {
        guard NotificationAuthorization.Settings(json: settings.json) == settings else {
            fatalError("state: an authorization does not read back")
        }
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
    names(bytes)
    return 0
}

/// The input as a name read from a folder (as `DirectoryHandle.names()` makes it a String).
private func names(_ bytes: [UInt8]) {
    // A folder's entry is at most NAME_MAX (255) bytes: longer inputs are no name.
    guard bytes.count <= Int(NAME_MAX) else { return }
    let name = String(decoding: bytes, as: UTF8.self)
    // A store's key: only a name the encoder makes is a key, and every key survives the trip.
    if let key = StoreKey.decode(name), StoreKey.encode(key) != name {
        fatalError("state: store name \(name) is not its key's")
    }
    if StoreKey.problem(with: bytes) == nil, StoreKey.decode(StoreKey.encode(bytes)) != bytes {
        fatalError("state: a store key does not read back")
    }
    // A copy store's version folder: what it names, its key names again.
    if let identity = CopyStore.identity(key: name), CopyStore.identity(key: CopyStore.key(identity)) != identity {
        fatalError("state: copy folder \(name) does not read back")
    }
    // A plugin file name: any bytes, escaped to a string and back.
    if PathBytes.unescape(PathBytes.escape(bytes)) != bytes {
        fatalError("state: a file name's bytes do not survive escaping")
    }
}
