import Foundation
import ServiceABI
import ServiceJSON
import ServiceVocabulary
import TestSupport
import Testing

@testable import HostCore

/// Every committed fuzz corpus file (Tests/Fuzz/Corpus/<target>/) through the parser its
/// target fuzzes, as ordinary tests: fast, no fuzzer needed, so a regression that brings a
/// trap back fails `swift test`. The `regress-*` files are the crashes issue 11 reported;
/// each has its own test with the exact reason.
@Suite struct FuzzCorpusTests {
    static func corpus(_ target: String) -> [String] {
        let folder = Repository.root.appendingPathComponent("Tests/Fuzz/Corpus/\(target)").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.sorted().map { folder + "/" + $0 }
    }

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    /// The bytes of the seed `name` of `target`.
    static func seed(_ target: String, _ name: String) throws -> [UInt8] {
        try bytes(try #require(corpus(target).first { $0.hasSuffix("/" + name) }, "no seed \(name) in \(target)"))
    }

    @Test(
        arguments: [
            "elf", "json", "control", "config", "frame", "manifest", "registry", "semver", "state", "minisign",
            "netlink", "schema", "fleet",
        ])
    func everyTargetHasASeedCorpus(target: String) {
        #expect(Self.corpus(target).count >= 5)
    }

    // MARK: minisign

    /// The seeds made by the real minisign: signatures and keys read, a cut one refused with its reason.
    @Test func minisign_realSignaturesAndKeysAreRead_aTruncatedOneIsRefused() throws {
        let prehashed = try Minisign.Signature(file: try Self.seed("minisign", "prehashed.minisig"))
        #expect(prehashed.prehashed && prehashed.trustedCommentText == "build 42")
        let legacy = try Minisign.Signature(file: try Self.seed("minisign", "legacy.minisig"))
        #expect(!legacy.prehashed && legacy.keyID == prehashed.keyID)
        #expect(try Minisign.Signature(file: try Self.seed("minisign", "crlf.minisig")).trustedCommentText == "crlf")
        let key = try Minisign.PublicKey(file: try Self.seed("minisign", "key.pub"))
        #expect(key.keyIDText == "CA2DBE4E3C13FEC2" && key.keyID == prehashed.keyID)
        let line = String(decoding: try Self.seed("minisign", "key-line.txt"), as: UTF8.self)
        #expect(try Minisign.PublicKey(base64: String(line.dropLast())) == key)
        #expect(throws: Minisign.FormatError(reason: "the signature file has 2 lines, not 4 (truncated?)")) {
            try Minisign.Signature(file: try Self.seed("minisign", "truncated.minisig"))
        }
        for path in Self.corpus("minisign") {
            let bytes = try Self.bytes(path)
            _ = try? Minisign.Signature(file: bytes)
            _ = try? Minisign.PublicKey(file: bytes)
        }
    }

    /// The verdict file seed (`STORE/.verdicts`) read as the host reads it; any byte changed, a
    /// cut or a foreign file is refused with its reason (the host then checks every file anew).
    @Test func minisign_theVerdictFileSeedIsRead_aChangedOrCutOneIsRefused() throws {
        let file = try Self.seed("minisign", "verdicts.bin")
        let entries = try VerdictFile.decode(file)
        #expect(entries.count == 2)
        let plugin = FileIdentity(
            device: 2049, inode: 1_234_567, size: 16384, modified: 1_700_000_000_123_456_789,
            changed: 1_700_000_000_223_456_789)
        let entry = try #require(entries[plugin])
        #expect(entry.sha256 == Array(0..<32))
        #expect(entry.signature?.prehashed == true && entry.signature?.file.inode == 1_234_568)
        #expect(entry.signature.map { Minisign.keyIDText($0.keyID) } == "CA2DBE4E3C13FEC2")
        #expect(entry.signature?.trustedComment == Array("timestamp:1700000000\tfile:libX.so\thashed".utf8))
        #expect(try VerdictFile.decode(VerdictFile.encode(entries)) == entries)
        #expect(try VerdictFile.decode(records: try Self.seed("minisign", "verdict-records.bin")[...]) == entries)
        var flipped = file
        flipped[flipped.count / 2] ^= 1
        #expect(throws: VerdictFile.FormatError(reason: "the checksum does not match")) {
            try VerdictFile.decode(flipped)
        }
        #expect(throws: VerdictFile.FormatError.self) { try VerdictFile.decode(Array(file.dropLast())) }
        #expect(throws: VerdictFile.FormatError.self) { try VerdictFile.decode(Array("not a verdict file".utf8)) }
        for path in Self.corpus("minisign") {
            let bytes = try Self.bytes(path)
            _ = try? VerdictFile.decode(bytes)
            _ = try? VerdictFile.decode(records: bytes[...])
        }
    }

    // MARK: state

    /// Each state seed as the host reads it back: a failure record or not one, a sentinel or
    /// not one; never a trap (a signal past Int32 trapped in `Int32(_:)` before).
    @Test(
        arguments: [
            ("record.json", "test.bad 11"),
            ("record-without-change-time.json", "test.bad 11"),
            ("record-signal-out-of-range.json", nil),
            ("record-status-out-of-range.json", nil),
            ("record-zero-crashes.json", nil),
        ] as [(String, String?)])
    func state_failureRecords_areReadOrRefused(name: String, expected: String?) throws {
        let value = try JSONValue(parsing: try Self.seed("state", name))
        let record = FailureRecord(json: value)
        #expect(record.map { "\($0.serviceID) \($0.signal.map(String.init) ?? "-")" } == expected)
        if let record {
            #expect(record.blocks(record.file))
            #expect(FailureRecord(json: record.json) == record)
        }
    }

    @Test(
        arguments: [
            ("sentinel-in-a-call.bin", "test.b", "didBecomeActive", nil),
            ("sentinel-loading.bin", nil, nil, "/usr/lib/servicehost/plugins/libSlow.so"),
            ("sentinel-index-past-its-ids.bin", "service #99", "event 4000000000", nil),
            ("sentinel-ids-longer-than-the-file.bin", "service #0", "didFinishLaunching", nil),
        ] as [(String, String?, String?, String?)])
    func state_sentinels_nameWhatThePreviousRunWasDoing(
        name: String, service: String?, event: String?, loading: String?
    ) throws {
        let run = Sentinel.decode(try Self.seed("state", name))
        #expect(run?.pid == 4242)
        #expect(run?.started == "2026-11-22T04:37:55Z")
        #expect(run?.service == service && run?.event == event && run?.loading == loading, "\(String(describing: run))")
    }

    @MainActor @Test func state_theAuthorizationAndRestorationSeeds_areRead() throws {
        func seed(_ name: String) throws -> [UInt8] { try Self.seed("state", name) }
        let settings = NotificationAuthorization.Settings(json: try JSONValue(parsing: try seed("authorization.json")))
        #expect(settings?.status == .authorized && settings?.allowed.names == ["banner", "list", "sound", "badge"])
        let activity = try SceneRestorations.activity(try seed("restoration.json"))
        #expect(activity.type == "test.edit" && activity.webpageURL?.url == "myapp://item/3")
        // A record is not an activity: refused with a reason.
        #expect(throws: InputError.self) { try SceneRestorations.activity(try seed("record.json")) }
    }

    /// The names a host reads back from its folders: a store key, a copy store's version
    /// folder (this format and the one before), a plugin file name that is not UTF-8.
    @Test func state_theNameSeeds_readAsTheirThings() throws {
        func name(_ seed: String) throws -> String { String(decoding: try Self.seed("state", seed), as: UTF8.self) }
        #expect(StoreKey.decode(try name("name-store-key.txt")) == Array("queue.items".utf8))
        #expect(StoreKey.decode(try name("name-store-key-escaped.txt")) == Array(".queue/items".utf8))
        let dotted = try #require(CopyStore.identity(key: try name("name-copy-folder.txt")))
        let dashed = try #require(CopyStore.identity(key: try name("name-copy-folder-dashes.txt")))
        #expect(dotted == dashed && dotted.size == 0x3c38)
        #expect(CopyStore.key(dotted) == (try name("name-copy-folder.txt")))
        let bytes = try Self.seed("state", "name-plugin-bytes.bin")
        #expect(PathBytes.escape(bytes) == #"lib\xff\xfeplugin\\x.so"#)
        #expect(PathBytes.unescape(PathBytes.escape(bytes)) == bytes)
    }

    // MARK: registry

    @Test(arguments: corpus("registry"))
    func registry_everySeed_isReadOrRefusedWithAProblem(path: String) throws {
        // What the reader accepts survives the writer; the rest is a Problem, never a trap.
        guard let entries = try? RegistryFile.decode(try Self.bytes(path)) else { return }
        #expect(try RegistryFile.decode(RegistryFile.encode(entries)) == entries)
    }

    /// A group whose length runs past the file is refused without being read: the reader never
    /// asks for more than the file holds (it asked 4 GiB, which the real file allocates first).
    @Test func registry_aGroupLongerThanTheFile_isNotAskedFor() throws {
        final class Largest: RegistryBytes {
            let inner: RegistryBytesInMemory
            var asked = 0
            init(_ bytes: [UInt8]) { inner = RegistryBytesInMemory(bytes) }
            var size: Int { inner.size }
            func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
                asked = max(asked, offset + count)
                return try inner.read(at: offset, count: count)
            }
        }
        let source = Largest(try Self.seed("registry", "huge-group-length.bin"))
        let reader = try RegistryReader(source)
        let slot = try #require(reader.slots.first)
        #expect(slot.length == 0xFFFF_FFFF)
        #expect(throws: RegistryFile.Problem.self) { try reader.group(slot) }
        #expect(source.asked <= source.size)
    }

    @Test(arguments: [
        ("empty.bin", nil),
        ("truncated.bin", "corrupt or truncated: cut short in the group of "),
        ("bad-checksum.bin", "corrupt or truncated: checksum mismatch in the group of "),
        ("bad-header.bin", "corrupt or truncated: header checksum mismatch"),
        ("huge-count.bin", "corrupt or truncated: 4294967295 groups in a header of 43 bytes"),
        ("huge-entry-count.bin", "corrupt or truncated: 4294967295 entries in 0 bytes"),
        (
            "huge-group-length.bin",
            "corrupt or truncated: cut short in the group of /opt/x/: 27 of 4294967295 bytes at byte "
        ),
        ("repeated-group.bin", "corrupt or truncated: "),
        ("not-a-name.bin", "corrupt or truncated: entry 0 of /opt/x/ is not a file name"),
        ("misnamed-group.bin", "corrupt or truncated: the group of /opt/y/ names /opt/x/"),
        ("one-group-corrupt.bin", "corrupt or truncated: checksum mismatch in the group of "),
        ("other-version.bin", "written by servicehost 9.9.9 in format 4"),
        ("other-format.bin", "written by another host version in format 1"),
        ("format-2.bin", "written by another host version in format 2"),
        ("format-3.bin", "written by another host version in format 3"),
    ])
    func registry_seeds_giveTheirProblem(name: String, expected: String?) throws {
        let path = Self.corpus("registry").first { $0.hasSuffix("/" + name) }!
        do {
            let entries = try RegistryFile.decode(try Self.bytes(path))
            #expect(expected == nil && entries.isEmpty)
        } catch let problem as RegistryFile.Problem {
            #expect(expected != nil && problem.description.hasPrefix(expected!), "\(problem)")
        }
    }

    @Test func registry_aCorruptGroup_isNotCheckedByAReaderOfAnotherDirectory() throws {
        let bytes = try Self.bytes(Self.corpus("registry").first { $0.hasSuffix("/one-group-corrupt.bin") }!)
        let groups = try RegistryFile.groups(bytes)
        #expect(groups.map(\.isIntact) == [false, true] || groups.map(\.isIntact) == [true, false])
        let intact = groups.filter(\.isIntact)
        let damaged = groups.filter { !$0.isIntact }
        try #require(intact.count == 1 && damaged.count == 1)
        let (sound, corrupt) = (intact[0], damaged[0])
        #expect(try RegistryFile.decode(bytes, onlyIn: sound.directory).count == 1)
        #expect(throws: RegistryFile.Problem.corrupt("checksum mismatch in the group of \(corrupt.directory)")) {
            try RegistryFile.decode(bytes, onlyIn: corrupt.directory)
        }
        // A save keeps the sound group byte for byte.
        let rewritten = RegistryFile.encode([:], keeping: [sound])
        #expect(try RegistryFile.decode(rewritten) == (try RegistryFile.decode(bytes, onlyIn: sound.directory)))
    }

    @Test func registry_hostWrittenSeed_holdsBothPlugins() throws {
        let path = Self.corpus("registry").first { $0.hasSuffix("/two-plugins.bin") }!
        let entries = try RegistryFile.decode(try Self.bytes(path))
        let ids = try entries.values.flatMap { try PluginMetadata.decode(try #require($0.section)).services.map(\.id) }
        #expect(ids.sorted() == ["dev.servicehost.logger", "dev.servicehost.uptime"])
    }

    // MARK: elf

    @Test(arguments: corpus("elf"))
    func elf_fromTheFileAndFromMemory_giveTheSameAnswer(path: String) throws {
        // The inspector reads the file with pread; the fuzz target reads the same bytes from memory.
        let fromFile = PluginInspector.inspect(path: path)
        let contents = try Self.bytes(path)
        let fromMemory = Result { () throws(LoadFailure.Reason) -> PluginMetadata in
            let image = try ELFImage(source: ELFBytes(contents: contents))
            guard try image.definesDynamicSymbol(SH_ENTRY_SYMBOL) else { throw .noEntrySymbol }
            guard let section = try image.sectionBytes(named: SH_METADATA_SECTION) else { throw .noMetadata }
            return try PluginMetadata.decode(section)
        }
        switch (fromFile, fromMemory) {
        case (.success(let inspected), .success(let metadata)): #expect(inspected.metadata == metadata)
        case (.failure(let failure), .failure(let reason)): #expect(failure.reason == reason)
        default: Issue.record("\(path): the file gives \(fromFile), memory gives \(fromMemory)")
        }
    }

    @Test func elf_seedPlugins_areReadWhole() throws {
        let uptime = try PluginInspector.inspect(path: Self.corpus("elf").first { $0.hasSuffix("/uptime.so") }!).get()
        #expect(uptime.metadata.services.map(\.id) == ["dev.servicehost.uptime"])
        let hello = try PluginInspector.inspect(path: Self.corpus("elf").first { $0.hasSuffix("/hello-c.so") }!).get()
        #expect(hello.metadata.services.map(\.id) == ["com.example.hello-c"])
    }

    @Test(arguments: [
        ("regress-shoff-max.so", "the section table at offset 0xffffffffffffffff"),
        ("regress-shstrtab-size-2e63.so", "bytes at offset"),
        ("regress-shstrtab-nobits-1tib.so", "are marked SHT_NOBITS: they have no bytes in the file"),
        ("regress-dynstr-nobits-1gib.so", "the dynamic symbol table has no string table"),
        ("regress-dynsym-entsize-2e63.so", "the dynamic symbol table has entries of"),
        ("regress-dynsym-offset-wraps.so", "bytes at offset 0xfffffffffffffff8"),
    ])
    func elf_issue11Crashes_areCorruptFileReasons(name: String, expected: String) throws {
        let path = Self.corpus("elf").first { $0.hasSuffix("/" + name) }!
        let failure = try #require(PluginInspector.inspect(path: path).failure)
        guard case .corrupt(let detail) = failure.reason else {
            Issue.record("\(failure)")
            return
        }
        #expect(detail.contains(expected), "\(detail)")
        #expect(failure.description.hasPrefix(path + ": corrupt or truncated ELF file: "))
    }

    @Test func elf_sectionTablePastTheEnd_namesTheOffsetAndTheFileSize() throws {
        let path = Self.corpus("elf").first { $0.hasSuffix("/regress-shoff-max.so") }!
        let size = try Self.bytes(path).count
        let failure = try #require(PluginInspector.inspect(path: path).failure)
        #expect(
            failure.message == "corrupt or truncated ELF file: the section table at offset 0xffffffffffffffff"
                + " (\(try Self.sectionCount(path)) entries of 64 bytes) lies past the end of the \(ELFImage.describe(size: size)) file"
        )
        #expect(ELFImage.describe(size: 8192) == "8 KiB")
        #expect(ELFImage.describe(size: 11888) == "11.6 KiB")
        #expect(ELFImage.describe(size: 312) == "312-byte")
    }

    static func sectionCount(_ path: String) throws -> Int {
        let bytes = try Self.bytes(path)
        return Int(bytes[60]) | Int(bytes[61]) << 8
    }

    // MARK: json

    @Test(arguments: corpus("json") + corpus("config") + corpus("control"))
    func json_acceptedDocuments_roundTrip_andBecomeATape(path: String) throws {
        let bytes = try Self.bytes(path)
        guard let value = try? JSONValue(parsing: bytes) else { return }
        #expect(try JSONValue(parsing: Array(value.serialized.utf8)) == value)
        let tape = JSONTape(value: value, text: bytes)
        #expect(tape.document.count >= 1)
        #expect(tape.textLength == bytes.count)
    }

    @Test func json_129Levels_isRefusedAtTheLevelThatBreaksTheLimit() throws {
        let path = Self.corpus("json").first { $0.hasSuffix("/deep-129.json") }!
        #expect(throws: JSONParseError(offset: 128, reason: "nesting deeper than 128")) {
            try JSONValue(parsing: try Self.bytes(path))
        }
        let deep = Self.corpus("json").first { $0.hasSuffix("/deep-128.json") }!
        #expect((try? JSONValue(parsing: try Self.bytes(deep))) != nil)
    }

    @Test func json_aMillionLevels_isRefusedWithoutRecursingAMillionTimes() {
        let text =
            Array(String(repeating: "[", count: 1_000_000).utf8) + Array(String(repeating: "]", count: 1_000_000).utf8)
        #expect(throws: JSONParseError(offset: 128, reason: "nesting deeper than 128")) { try JSONValue(parsing: text) }
        #expect(throws: JSONParseError.self) { try JSONTape(parsing: text) }
    }

    // MARK: control

    @Test(arguments: corpus("control"))
    func control_everyLineIsARequestOrARefusalWithAReason(path: String) throws {
        switch ControlRequest.parse(try Self.bytes(path), maxPayload: 65536) {
        case .success: break
        case .failure(let refusal): #expect(!refusal.message.isEmpty)
        }
    }

    // MARK: config

    @Test(arguments: corpus("config"))
    func config_everyFileIsAConfigurationOrAnErrorNamingTheFile(path: String) throws {
        let bytes = try Self.bytes(path)
        do {
            _ = try HostConfiguration.parse(bytes: bytes, file: path)
        } catch {
            #expect(error.description.hasPrefix(path + ": "))
        }
    }

    // MARK: frame

    /// Decodes every frame of `bytes` as the host and the worker would; each WireError is collected.
    /// A host's configurationForConnecting event and its out-struct (64 bytes of settings
    /// buffer), which a worker's `result` frame answers.
    final class ConfigurationEvent {
        let out = UnsafeMutablePointer<sh_scene_configuration>.allocate(capacity: 1)
        let settings = UnsafeMutablePointer<CChar>.allocate(capacity: 64)
        let connection = UnsafeMutablePointer<sh_scene_connection>.allocate(capacity: 1)
        let event = UnsafeMutablePointer<sh_event>.allocate(capacity: 1)

        init() {
            out.initialize(to: sh_scene_configuration())
            out.pointee.size = UInt32(MemoryLayout<sh_scene_configuration>.size)
            out.pointee.settings = settings
            out.pointee.settings_capacity = 64
            connection.initialize(to: sh_scene_connection())
            connection.pointee.size = UInt32(MemoryLayout<sh_scene_connection>.size)
            connection.pointee.configuration = out
            event.initialize(to: sh_event())
            event.pointee.kind = EventKind.configurationForConnecting.rawValue
            event.pointee.data = UnsafeRawPointer(connection)
        }

        deinit {
            for pointer in [
                UnsafeMutableRawPointer(out), UnsafeMutableRawPointer(settings), UnsafeMutableRawPointer(connection),
                UnsafeMutableRawPointer(event),
            ] {
                pointer.deallocate()
            }
        }
    }

    static func replay(
        _ bytes: [UInt8], forwarder: HostCallForwarder, answering: ConfigurationEvent = ConfigurationEvent()
    ) -> [WireError] {
        var decoder = FrameDecoder()
        bytes.withUnsafeBytes { decoder.append($0) }
        var errors: [WireError] = []
        let scenes = WorkerScenes()
        while true {
            let frame: Frame
            do throws(WireError) {
                guard let next = try decoder.next() else { break }
                frame = next
            } catch {
                // A header the decoder refuses (magic, version, size, type) ends the stream, as
                // the host ends the worker: the decoder does not move past it.
                errors.append(error)
                break
            }
            do throws(WireError) {
                var r = frame.reader
                switch frame.type {
                case .complete, .log, .post, .subscribe, .registerForRemoteNotifications, .call, .deploy:
                    try forwarder.perform(frame)
                case .openFailed: _ = try LoadFailureCodec.decode(&r)
                case .event: _ = try EventCodec.decode(&r, arena: EventArena(), scenes: scenes)
                case .opened: _ = try IsolatedPlugin.openedServices(&r)
                case .result:
                    _ = try r.i32("result")
                    try EventCodec.readAnswer(&r, for: answering.event)
                default: while !r.isAtEnd { _ = try r.blob("anything") }
                }
            } catch {
                errors.append(error)
            }
        }
        return errors
    }

    @Test(arguments: corpus("frame"))
    func frame_everyFileDecodesOrBreaksTheProtocolWithAReason(path: String) throws {
        let peer = try StandInPeer()
        for error in Self.replay(try Self.bytes(path), forwarder: peer.forwarder) {
            #expect(!error.description.isEmpty)
        }
    }

    /// A worker's answers as the host reads them: an `opened` frame's ids; a configuration
    /// answer copied into the host's out-struct (its settings cut to the buffer, the length
    /// kept, so the host refuses it as from an in-process service); a name of the wrong size
    /// breaks the protocol.
    @Test func frame_aWorkersAnswers_areReadIntoTheHostsStructs() throws {
        let peer = try StandInPeer()
        var decoder = FrameDecoder()
        try Self.seed("frame", "opened.bin").withUnsafeBytes { decoder.append($0) }
        var opened = try #require(try decoder.next()).reader
        #expect(try IsolatedPlugin.openedServices(&opened) == ["test.a", "test.b"])

        let answer = ConfigurationEvent()
        #expect(
            Self.replay(
                try Self.seed("frame", "result-configuration.bin"), forwarder: peer.forwarder, answering: answer
            ).isEmpty)
        #expect(
            withUnsafeBytes(of: answer.out.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                == "main")
        #expect(
            answer.out.pointee.settings_len == 7
                && String(decoding: UnsafeRawBufferPointer(start: answer.settings, count: 7), as: UTF8.self)
                    == #"{"a":1}"#
        )

        let past = ConfigurationEvent()
        #expect(
            Self.replay(
                try Self.seed("frame", "result-configuration-settings-past-the-buffer.bin"), forwarder: peer.forwarder,
                answering: past
            ).isEmpty)
        #expect(past.out.pointee.settings_len == 100)

        #expect(
            Self.replay(try Self.seed("frame", "result-configuration-short-name.bin"), forwarder: peer.forwarder)
                == [WireError.malformed("a configuration answer of 3 and 32 bytes")])
    }

    @Test func frame_storeSetWithALengthOf2To63_breaksTheProtocol() throws {
        let peer = try StandInPeer()
        let path = Self.corpus("frame").first { $0.hasSuffix("/regress-store-set-length-2e63.bin") }!
        #expect(
            Self.replay(try Self.bytes(path), forwarder: peer.forwarder)
                == [WireError.malformed("store_set of 9223372036854775808 bytes")])
    }

    /// NULL with a length from a worker is what HostAdapter refuses in process: SH_INVALID, and
    /// the store never sees it.
    @Test func frame_storeSetOfNullWithALength_answersInvalid_beforeTheStore() throws {
        let peer = try StandInPeer()
        let path = Self.corpus("frame").first { $0.hasSuffix("/regress-store-set-null-5.bin") }!
        #expect(Self.replay(try Self.bytes(path), forwarder: peer.forwarder).isEmpty)
        var reply = try #require(try peer.reply())
        #expect(try reply.i32("result") == Int32(SH_INVALID))
        #expect(peer.functions.storeSets.withLock { $0 }.isEmpty)
    }

    // MARK: manifest

    @Test(arguments: corpus("manifest"))
    func manifest_everyFileGeneratesOrFailsWithItsPath(path: String) throws {
        let output = try Scratch().file("out.swift")
        let result = try Command.run(try Repository.product("servicehost-metagen"), [path, output])
        #expect(result.status == 0 || result.status == 1, "\(result.stderr)")  // never a signal (128 + n)
        if result.status == 0 {
            #expect(try String(contentsOfFile: output, encoding: .utf8).contains("@c(servicehost_entry)"))
        } else {
            #expect(result.stderr.hasPrefix(path + ": "), "\(result.stderr)")
        }
    }

    // MARK: schema

    /// Each seed: a schema read or refused with a reason, and settings after a NUL checked.
    @Test(arguments: corpus("schema"))
    func schema_everySeedReadsOrFailsWithAReason(path: String) throws {
        let bytes = try Self.bytes(path)
        let cut = bytes.firstIndex(of: 0)
        do {
            let schema = try SettingsSchema(parsing: Array(bytes[..<(cut ?? bytes.count)]))
            let settings = try cut.map { try JSONValue(parsing: Array(bytes[($0 + 1)...])) }
            if case .failure(let violation) = schema.apply(to: settings) { #expect(!violation.reason.isEmpty) }
        } catch {
            #expect(!"\(error)".isEmpty)
        }
    }

    /// What the seeds show: defaults filled in, a violation named by its key and rule, a
    /// keyword misspelt and bounds the wrong way round refused.
    @Test func schema_theSeedsDefaultsAndViolations() throws {
        let logger = try SettingsSchema(parsing: try Self.seed("schema", "logger.json"))
        #expect(try logger.apply(to: nil).get() == ["level": "info"])
        #expect(try logger.apply(to: ["level": "debug", "other": 1]).get() == ["level": "debug", "other": 1])
        #expect(
            logger.apply(to: ["level": "loud"])
                == .failure(
                    SettingsViolation(
                        key: "level", reason: #"must be one of "error", "warn", "info", "debug", not "loud""#)))
        let broker = try Self.seed("schema", "broker-port.bin")
        let cut = try #require(broker.firstIndex(of: 0))
        let schema = try SettingsSchema(parsing: Array(broker[..<cut]))
        #expect(
            schema.apply(to: try JSONValue(parsing: Array(broker[(cut + 1)...])))
                == .failure(SettingsViolation(key: "port", reason: "must be at most 65535")))
        #expect(schema.apply(to: ["port": 1]) == .failure(SettingsViolation(key: "host", reason: "is required")))
        #expect(
            schema.apply(to: ["host": "Broker"])
                == .failure(SettingsViolation(key: "host", reason: #"must match the pattern "^[a-z0-9.-]+$""#)))
        #expect(try schema.apply(to: ["host": "b"]).get() == ["host": "b", "port": 1883])
        #expect(schema.apply(to: ["host": "b", "port": 1.5]).failureKey == "port")
        let nested = try Self.seed("schema", "nested-default.bin")
        let split = try #require(nested.firstIndex(of: 0))
        #expect(
            try SettingsSchema(parsing: Array(nested[..<split])).apply(to: ["a": [:]]).get() == ["a": ["b": true]])
        #expect(
            throws: SettingsSchemaError(
                path: "typo",
                reason:
                    "is not a keyword of the settings schema (type, properties, required, enum, minimum, maximum, maxLength, pattern, default, title, description)"
            )
        ) {
            try SettingsSchema(parsing: try Self.seed("schema", "unknown-keyword.json"))
        }
        #expect(throws: SettingsSchemaError(path: "minimum", reason: "5 is more than maximum 1")) {
            try SettingsSchema(parsing: try Self.seed("schema", "min-over-max.json"))
        }
    }

    // MARK: netlink

    /// Each seed (real dumps of this machine's links and routes, a kernel error, a cut read, a
    /// lying length) read into messages or refused with a reason.
    @Test(arguments: corpus("netlink"))
    func netlink_everyFileReadsOrFailsWithAReason(path: String) throws {
        let bytes = try Self.bytes(path)
        do {
            var state = ReachabilityState()
            for message in try RouteNetlink.parse(bytes[...]) { state.apply(message) }
            _ = state.summary
        } catch {
            #expect(!error.reason.isEmpty)
        }
    }

    @Test func netlink_theRealDumps_readTheLoopback_andTheCutOnesAreRefused() throws {
        let links = try RouteNetlink.parse(try Self.seed("netlink", "links-0.bin")[...])
        #expect(links.contains { if case .link(1, "lo", _, false) = $0 { true } else { false } })
        #expect(try RouteNetlink.parse(try Self.seed("netlink", "routes-1.bin")[...]) == [.done])
        #expect(
            try RouteNetlink.parse(try Self.seed("netlink", "error.bin")[...]).first.map {
                if case .error(let code) = $0 { code > 0 } else { false }
            } == true)
        #expect(throws: RouteNetlink.Malformed.self) {
            try RouteNetlink.parse(try Self.seed("netlink", "cut.bin")[...])
        }
        #expect(throws: RouteNetlink.Malformed.self) {
            try RouteNetlink.parse(try Self.seed("netlink", "long-length.bin")[...])
        }
    }

    // MARK: semver

    @Test(arguments: corpus("semver"))
    func semver_everyFileReadsOrFailsWithAReason(path: String) throws {
        let text = String(decoding: try Self.bytes(path), as: UTF8.self)
        if let version = try? SemanticVersion(parsing: text) {
            #expect(try SemanticVersion(parsing: version.description) == version)
            #expect(try VersionRange(parsing: "=" + version.description).contains(version))
        }
        do {
            let requirement = try ServiceRequirement(claim: text)
            #expect(ServiceID.problem(with: requirement.id) == nil)
        } catch {
            #expect(!error.reason.isEmpty)
        }
    }
}

extension Result {
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}

extension Result where Success == JSONValue?, Failure == SettingsViolation {
    /// The key of a violation, or nil when the settings were accepted.
    fileprivate var failureKey: String? {
        if case .failure(let violation) = self { violation.key } else { nil }
    }
}
