import Foundation
import TestSupport
import Testing

@testable import HostCore

/// A service's key-value store: values, keys as file names, limits, and ids or keys that try
/// to leave the state directory.
@Suite struct ServiceStoreTests {
    let scratch: Scratch
    let statePath: String

    init() throws {
        scratch = try Scratch()
        statePath = scratch.file("state")
    }

    private func open(_ id: String = "test.store", limits: ServiceStore.Limits = .default) throws -> ServiceStore {
        try StateDirectory(path: statePath).store(for: id, limits: limits)
    }

    /// Every file and folder under the scratch folder, relative to it, sorted.
    private func tree() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: scratch.path)
        var paths: [String] = []
        while let path = enumerator?.nextObject() as? String { paths.append(path) }
        return paths.sorted()
    }

    // MARK: Values

    @Test func setThenGet_returnsTheBytes_andRemoveForgetsThem() throws {
        let store = try open()
        #expect(try store.get("missing") == nil)
        try store.set("greeting", to: Array("hello".utf8))
        try store.set("empty", to: [])
        try store.set(Array("binary".utf8), to: [0, 255, 10, 0])
        #expect(try store.get("greeting") == Array("hello".utf8))
        #expect(try store.get("empty") == [])
        #expect(try store.get("binary") == [0, 255, 10, 0])
        try store.set("greeting", to: Array("bye".utf8))
        #expect(try store.get("greeting") == Array("bye".utf8))
        #expect(try store.remove("greeting"))
        #expect(try !store.remove("greeting"))
        #expect(try store.get("greeting") == nil)
    }

    @Test func keys_listEveryKeyInByteOrder() throws {
        let store = try open()
        let keys: [[UInt8]] = [
            Array("b".utf8), Array("a.b".utf8), [0xFF, 0x01], Array("A".utf8), Array("../x".utf8), [0x2E],
        ]
        for key in keys { try store.set(key, to: [1]) }
        #expect(try store.keys() == keys.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test func values_surviveReopeningTheStateDirectory() throws {
        try open().set("kept", to: Array("across launches".utf8))
        // The first StateDirectory is gone, and with it its lock.
        #expect(try open().get("kept") == Array("across launches".utf8))
    }

    @Test func everyByteButNUL_roundTripsThroughAKey() throws {
        let store = try open()
        // In chunks of 64 bytes, so each key's file name (at most 3 bytes per byte) fits in 255.
        let keys = stride(from: 1, to: 256, by: 64).map { start in (start..<min(start + 64, 256)).map { UInt8($0) } }
        for (index, key) in keys.enumerated() { try store.set(key, to: [UInt8(index)]) }
        for (index, key) in keys.enumerated() { #expect(try store.get(key) == [UInt8(index)]) }
        #expect(try store.keys() == keys.sorted { $0.lexicographicallyPrecedes($1) })
    }

    // MARK: Keys as file names

    @Test func keys_areStoredAsReadableSafeFileNames() throws {
        let store = try open()
        for key in ["queue.items", "a/b", "..", ".", ".hidden", "50%", "é"] { try store.set(key, to: [1]) }
        let names = try FileManager.default.contentsOfDirectory(atPath: store.path).sorted()
        #expect(names == ["%2E", "%2E.", "%2Ehidden", "50%25", "%C3%A9", "a%2Fb", "queue.items"].sorted())
    }

    @Test func decode_acceptsOnlyTheNamesEncodeMakes() {
        #expect(StoreKey.decode("queue.items") == Array("queue.items".utf8))
        #expect(StoreKey.decode("a%2Fb") == Array("a/b".utf8))
        #expect(StoreKey.decode("%41") == nil)  // "A" is spelled "A"
        #expect(StoreKey.decode("a%2fb") == nil)  // lower-case hex is not canonical
        #expect(StoreKey.decode(".tmp-123") == nil)
        #expect(StoreKey.decode("a b") == nil)
        #expect(StoreKey.decode("%00") == nil)
        #expect(StoreKey.decode("%2") == nil)
        #expect(StoreKey.decode("") == nil)
    }

    @Test(arguments: ["../../escaped", "/tmp/escaped", "..", ".", "a/../../escaped", "./.."])
    func keys_thatLookLikePaths_stayInsideTheServiceFolder(_ key: String) throws {
        let store = try open()
        try store.set(key, to: Array("x".utf8))
        #expect(try store.get(key) == Array("x".utf8))
        #expect(try store.keys() == [Array(key.utf8)])
        let outside = try tree().filter { !$0.hasPrefix("state") }
        #expect(outside.isEmpty)
        #expect(try tree().allSatisfy { $0 == "state" || $0.hasPrefix("state/services") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).count == 1)
    }

    @Test func invalidKeys_areRefused() throws {
        let store = try open()
        #expect(throws: StorageError(path: store.path, code: .invalidKey(reason: "it is empty"))) {
            try store.set("", to: [1])
        }
        #expect(throws: StorageError(path: store.path, code: .invalidKey(reason: "it holds a NUL byte"))) {
            try store.set([0x61, 0, 0x62], to: [1])
        }
        #expect(throws: StorageError(path: store.path, code: .invalidKey(reason: "it is empty"))) { try store.get("") }
    }

    // MARK: Service ids

    @Test(arguments: [
        "..", ".", "", "../x", "a/b", "/etc", "com.example/../..", "com..example", ".hidden.x", "com.example.x\0y",
        "host",
    ])
    func serviceIDs_thatCouldLeaveTheStateDirectory_areRefused(_ id: String) throws {
        let state = try StateDirectory(path: statePath)
        #expect {
            try state.store(for: id)
        } throws: { error in
            guard let error = error as? StorageError, case .invalidServiceID(let refused, _) = error.code else {
                return false
            }
            return refused == id
        }
        #expect(try tree() == ["state", "state/services"])
    }

    @Test func aSymlinkPlantedAsTheServiceFolder_isRefused() throws {
        _ = try StateDirectory(path: statePath)
        let target = try scratch.folder("elsewhere", mode: 0o700)
        try FileManager.default.createSymbolicLink(
            atPath: statePath + "/services/test.store", withDestinationPath: target)
        // O_NOFOLLOW | O_DIRECTORY on a symlink: Linux says ENOTDIR.
        #expect { try open() } throws: { [ELOOP, ENOTDIR].contains(($0 as? StorageError)?.errno) }
    }

    @Test func aSymlinkPlantedAsAKey_isNeitherFollowedForReadingNorForWriting() throws {
        let store = try open()
        let victim = try scratch.write("victim", Array("precious".utf8))
        try FileManager.default.createSymbolicLink(atPath: store.path + "/key", withDestinationPath: victim)
        #expect(throws: StorageError(path: store.path + "/key", code: .notRegularFile(kind: "symlink"))) {
            try store.get("key")
        }
        try store.set("key", to: Array("new".utf8))  // replaces the link itself
        #expect(try store.get("key") == Array("new".utf8))
        #expect(FileManager.default.contents(atPath: victim) == Data("precious".utf8))
    }

    // MARK: Limits

    @Test func aKeyWhoseFileNameIsTooLong_isRefused() throws {
        let store = try open()
        try store.set(String(repeating: "k", count: 255), to: [1])
        #expect(throws: StorageError(path: store.path, code: .keyTooLong(fileNameBytes: 256, limit: 255))) {
            try store.set(String(repeating: "k", count: 256), to: [1])
        }
        // 86 bytes of 0xFF take 258 bytes as %FF.
        #expect(throws: StorageError(path: store.path, code: .keyTooLong(fileNameBytes: 258, limit: 255))) {
            try store.set([UInt8](repeating: 0xFF, count: 86), to: [1])
        }
        #expect(
            StorageError(path: "p", code: .keyTooLong(fileNameBytes: 258, limit: 255)).description
                == "p: key too long: its file name would be 258 bytes, the limit is 255 (bytes other than A-Z a-z 0-9 . _ - take three)"
        )
    }

    @Test func aValueLargerThanTheLimit_isRefused_andOneAtTheLimitIsKept() throws {
        let store = try open()
        let limit = ServiceStore.Limits.default.maxValueSize
        #expect(limit == 1 << 20)
        try store.set("big", to: [UInt8](repeating: 7, count: limit))
        #expect(try store.get("big")?.count == limit)
        #expect(throws: StorageError(path: store.path, code: .valueTooLarge(bytes: limit + 1, limit: limit))) {
            try store.set("big", to: [UInt8](repeating: 8, count: limit + 1))
        }
        #expect(try store.get("big")?.first == 7)
    }

    @Test func theKeyLimit_refusesANewKey_butNotAnOverwriteOrAKeyAfterARemove() throws {
        let store = try open(limits: ServiceStore.Limits(maxKeys: 3))
        for key in ["a", "b", "c"] { try store.set(key, to: [1]) }
        #expect(throws: StorageError(path: store.path, code: .tooManyKeys(limit: 3))) { try store.set("d", to: [1]) }
        try store.set("a", to: [2])
        try store.remove("b")
        try store.set("d", to: [1])
        #expect(try store.keys().count == 3)
        #expect(ServiceStore.Limits.default.maxKeys == 10_000)
    }

    @Test func theKeyLimit_countsKeysAlreadyOnDisk() throws {
        do {
            let store = try open()
            for key in ["a", "b", "c"] { try store.set(key, to: [1]) }
        }
        let store = try open(limits: ServiceStore.Limits(maxKeys: 3))
        #expect(throws: StorageError(path: store.path, code: .tooManyKeys(limit: 3))) { try store.set("d", to: [1]) }
    }

    @Test func aPlantedOversizedValue_isAnErrorNotAnAllocation() throws {
        let store = try open(limits: ServiceStore.Limits(maxValueSize: 16))
        try scratch.write("state/services/test.store/big", [UInt8](repeating: 1, count: 17), mode: 0o600)
        #expect { try store.get("big") } throws: { ($0 as? StorageError)?.errno == EFBIG }
    }

    // MARK: Crash leftovers

    @Test func temporaryFilesLeftByACrash_areRemovedWhenTheStoreOpens_andForeignFilesAreNotKeys() throws {
        try open().set("kept", to: [1])
        try scratch.write("state/services/test.store/.tmp-0123abcd", Array("half a valu".utf8), mode: 0o600)
        try scratch.write("state/services/test.store/not a key", [1], mode: 0o600)
        let store = try open()
        let names = try FileManager.default.contentsOfDirectory(atPath: store.path).sorted()
        #expect(names == ["kept", "not a key"])
        #expect(try store.keys() == [Array("kept".utf8)])
    }
}
