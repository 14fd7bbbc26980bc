import Testing

@testable import HostCore

/// The name of a stored copy's KEY directory: written digit by digit for speed, so it is checked
/// against the standard library's hex and read back by eviction's parser.
@Suite struct CopyStoreKeyTests {
    @Test(arguments: [
        FileIdentity(device: 0, inode: 0, size: 0, modified: 0, changed: 0),
        FileIdentity(
            device: 0xfd01, inode: 1_234_567, size: 16_384, modified: 1_732_000_000_123_456_789,
            changed: 1_732_000_000_987_654_321),
        FileIdentity(device: .max, inode: 1, size: -1, modified: .min, changed: 15),
        FileIdentity(device: 16, inode: 0x10, size: 255, modified: 256, changed: .max),
    ])
    func theKey_isTheFiveNumbersInHex_inodeBackwardsFirst_andReadsBack(identity: FileIdentity) {
        let expected = [
            String(String(identity.inode, radix: 16).reversed()),
            String(identity.device, radix: 16), String(UInt64(bitPattern: identity.size), radix: 16),
            String(UInt64(bitPattern: identity.modified), radix: 16),
            String(UInt64(bitPattern: identity.changed), radix: 16),
        ].joined(separator: ".")
        #expect(CopyStore.key(identity) == expected)
        #expect(CopyStore.identity(key: CopyStore.key(identity)) == identity)
    }

    /// Files made one after another (neighbouring inodes) differ in their key's first byte, so
    /// ld.so's name comparisons stop right after the store's path.
    @Test func neighbouringInodes_differInTheFirstByte() {
        let first = CopyStore.key(FileIdentity(device: 0xfe00, inode: 0x1482ff, size: 15_416, modified: 7, changed: 7))
        let next = CopyStore.key(FileIdentity(device: 0xfe00, inode: 0x148300, size: 15_416, modified: 7, changed: 7))
        #expect(first.utf8.first != next.utf8.first)
    }

    /// A KEY of the format before (dashes, device first) reads as its identity, so eviction
    /// removes those versions by the same rule; other names are no key.
    @Test func aKeyOfTheFormatBefore_readsAsItsIdentity() {
        #expect(
            CopyStore.identity(key: "fe00-1482ff-3c38-18eaeb0f4f7ac131-18eaeb0f4f7ac132")
                == FileIdentity(
                    device: 0xfe00, inode: 0x1482ff, size: 0x3c38, modified: 0x18ea_eb0f_4f7a_c131,
                    changed: 0x18ea_eb0f_4f7a_c132))
        #expect(CopyStore.identity(key: "ff2841.fe00.3c38.18eaeb0f4f7ac131") == nil)
        #expect(CopyStore.identity(key: "ff2841.fe00.3c38.18eaeb0f4f7ac131.x") == nil)
        #expect(CopyStore.identity(key: "fe00-1482ff-3c38-18eaeb0f4f7ac131") == nil)
        #expect(CopyStore.identity(key: "servicehost-loaded-12-abc") == nil)
    }
}
