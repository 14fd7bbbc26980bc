import Foundation
import MQTTCodec
import TestSupport
import Testing

/// A fleet bundle's ustar reader (issue 41): the seeds of the `bundle` fuzz target (written by
/// Python's tarfile, Tests/Fuzz/Corpus/bundle) give their files or their reason, and damaged
/// headers are refused with theirs, never a trap.
@Suite struct BundleArchiveTests {
    static func seed(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Repository.root.appendingPathComponent("Tests/Fuzz/Corpus/bundle/\(name)")))
    }

    static func reason(_ bytes: [UInt8]) -> (BundleArchiveError.Reason, String?)? {
        do {
            _ = try BundleArchive(bytes)
            return nil
        } catch { return (error.reason, error.entry) }
    }

    @Test func theSeeds_giveTheirFiles_orTheirReason() throws {
        let good = try Self.seed("good.tar")
        let archive = try BundleArchive(good)
        #expect(archive.entries.map(\.name) == ["libA.so", "libA.so.minisig", "services.json"])
        #expect(Array(good[archive.entries[0].bytes]) == Array("\u{7f}ELF plugin".utf8))
        #expect(try BundleArchive(Self.seed("dot-folder.tar")).entries.map(\.name) == ["libA.so"])
        #expect(Self.reason(try Self.seed("escape.tar"))! == (.pathEscape, "../evil.so"))
        #expect(Self.reason(try Self.seed("folder.tar"))! == (.pathEscape, "sub/libA.so"))
        #expect(Self.reason(try Self.seed("symlink.tar"))! == (.link, "libA.so"))
        #expect(Self.reason(try Self.seed("hardlink.tar"))! == (.link, "libB.so"))
    }

    /// `host fleet publish`'s packing: read back by this reader and by Python's tarfile, the
    /// same bytes every time.
    @Test func aPackedBundle_readsBack_hereAndInPythonsTarfile() throws {
        let files: [(name: String, bytes: [UInt8])] = [
            ("libA.so", Array("\u{7f}ELF plugin".utf8)), ("empty.so", []),
            ("services.json", [UInt8](repeating: 65, count: 1024)),
        ]
        let packed = BundleArchive.pack(files)
        #expect(packed == BundleArchive.pack(files))
        let archive = try BundleArchive(packed)
        #expect(archive.entries.map(\.name) == files.map(\.name))
        #expect(archive.entries.map { Array(packed[$0.bytes]) } == files.map(\.bytes))
        let scratch = try Scratch()
        let path = try scratch.write("packed.tar", packed)
        let listed = try Command.run(
            "/usr/bin/python3",
            [
                "-c", "import tarfile,sys; print(' '.join(f'{m.name}:{m.size}' for m in tarfile.open(sys.argv[1])))",
                path,
            ])
        #expect(listed.stdout == "libA.so:11 empty.so:0 services.json:1024\n", "\(listed.stderr)")
    }

    @Test func damagedHeaders_areRefusedWithTheirReason() throws {
        var bytes = try Self.seed("good.tar")
        bytes[10] ^= 1  // a byte of the first name: the checksum no longer matches
        #expect(Self.reason(bytes)?.0 == .checksum)
        bytes = try Self.seed("good.tar")
        // A size of eleven 7s (8 GiB): past the archive's end, said, not read.
        bytes.replaceSubrange(124..<136, with: Array("77777777777".utf8) + [0])
        var sum = 0
        for index in 0..<512 { sum += (148..<156).contains(index) ? 32 : Int(bytes[index]) }
        let text = Array(String(sum, radix: 8).utf8)
        bytes.replaceSubrange(
            148..<156, with: [UInt8](repeating: UInt8(ascii: "0"), count: 6 - text.count) + text + [0, 32])
        #expect(Self.reason(bytes)?.0 == .malformed)
        #expect(Self.reason(Array(bytes.prefix(100)))?.0 == .malformed)
        #expect(Self.reason([])?.0 == .malformed)
        #expect(Self.reason([UInt8](repeating: 0, count: 1024)) == nil)
    }

    @Test func theFuzzTargetsSeeds_areAllRead() throws {
        let folder = Repository.root.appendingPathComponent("Tests/Fuzz/Corpus/bundle")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.count >= 6)
        for name in names { _ = Self.reason([UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))) }
    }
}
