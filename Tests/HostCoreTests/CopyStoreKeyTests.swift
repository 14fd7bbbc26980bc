import Testing

@testable import HostCore

/// The name of a stored copy's KEY directory: written digit by digit for speed, so it is checked
/// against the standard library's hex and read back by eviction's parser.
@Suite struct CopyStoreKeyTests {
    @Test(arguments: [
        FileIdentity(device: 0, inode: 0, size: 0, modified: 0, changed: 0),
        FileIdentity(device: 0xfd01, inode: 1_234_567, size: 16_384, modified: 1_732_000_000_123_456_789, changed: 1_732_000_000_987_654_321),
        FileIdentity(device: .max, inode: 1, size: -1, modified: .min, changed: 15),
        FileIdentity(device: 16, inode: 0x10, size: 255, modified: 256, changed: .max),
    ])
    func theKey_isTheFiveNumbersInHex_andReadsBack(identity: FileIdentity) {
        let expected = [
            identity.device, identity.inode, UInt64(bitPattern: identity.size), UInt64(bitPattern: identity.modified),
            UInt64(bitPattern: identity.changed),
        ].map { String($0, radix: 16) }.joined(separator: "-")
        #expect(CopyStore.key(identity) == expected)
        #expect(CopyStore.identity(key: CopyStore.key(identity)) == identity)
    }
}
