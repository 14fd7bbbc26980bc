import Foundation
import TestSupport
import Testing

@testable import HostCore

/// Every loader failure, each from a crafted file, through the same loader `host` uses.
@MainActor
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct LoaderTests {
    let scratch: Scratch
    let lib: String

    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
    }

    @discardableResult
    private func probe(_ name: String, _ defines: [String] = []) throws -> String {
        try Command.compileC(Repository.fixture("CPlugins/probe.c"), to: lib + "/" + name, defines: defines)
    }

    private func loadAll(allowInsecure: Bool = false) throws -> (
        report: (services: [LoadedServiceInfo], failures: [LoadFailure]), byName: [String: LoadFailure.Reason]
    ) {
        let inspection = try PluginLoader.inspect(directories: [lib], allowInsecure: allowInsecure)
        var services: [LoadedServiceInfo] = []
        var failures = inspection.failures
        for plugin in inspection.plugins {
            do throws(LoadFailure.Reason) { services += try PluginLoader.open(plugin) } catch {
                failures.append(LoadFailure(path: plugin.path, reason: error))
            }
        }
        var byName: [String: LoadFailure.Reason] = [:]
        for failure in failures { byName[URL(fileURLWithPath: failure.path).lastPathComponent] = failure.reason }
        return ((services, failures), byName)
    }

    /// The path of the C library this test process runs with: a real system shared object.
    private func systemLibrary() throws -> String {
        let maps = processMaps()
        guard let line = maps.split(separator: "\n").first(where: { $0.hasSuffix("/libc.so.6") }),
            let slash = line.firstIndex(of: "/")
        else { throw TestFailure("libc.so.6 not in /proc/self/maps:\n\(maps)") }
        return String(line[slash...])
    }

    @Test func aGoodPluginLoads_andBadFilesEachGetTheirReason() throws {
        try probe("good.so", ["PROBE_ID=\"test.good\""])
        try scratch.write("lib/empty.so", [])
        try scratch.write("lib/random.so", (0..<512).map { [0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01, 0x02, 0x03][$0 % 8] })
        try scratch.write("lib/text.so", Array("#!/bin/sh\necho not a library\n".utf8))
        try scratch.copy(try systemLibrary(), to: "lib/system.so", mode: 0o644)

        let (report, failures) = try loadAll()
        #expect(report.services.map(\.metadata.id) == ["test.good"])
        #expect(failures["empty.so"] == .notELF(detail: "the file is empty"))
        #expect(failures["random.so"] == .notELF(detail: "it starts with bytes de ad be ef 00 01 02 03"))
        #expect(failures["text.so"] == .notELF(detail: "it is text, starting \"#!/bin/sh\\necho n\""))
        #expect(failures["system.so"] == .noEntrySymbol)
        #expect(LoadFailure(path: "x", reason: .noEntrySymbol).message.contains("not a ServiceHost plugin"))
    }

    @Test func wrongABIVersion_namesBothVersions() throws {
        try probe("future.so", ["PROBE_ABI_MIN=7", "PROBE_ABI_MAX=9"])
        let (_, failures) = try loadAll()
        #expect(failures["future.so"] == .abiMismatch(pluginMin: 7, pluginMax: 9, hostMin: 1, hostMax: 1))
        let message = LoadFailure(path: "future.so", reason: failures["future.so"]!).message
        #expect(
            message
                == "needs a newer host: the plugin speaks ABI versions 7 to 9, this host speaks ABI version 1 (upgrade the host)"
        )
    }

    @Test func duplicateServiceID_namesBothFiles() throws {
        let first = try probe("a.so", ["PROBE_ID=\"test.same\""])
        try probe("b.so", ["PROBE_ID=\"test.same\""])
        let (report, failures) = try loadAll()
        #expect(report.services.map(\.path) == [first])
        #expect(failures["b.so"] == .duplicateServiceID(id: "test.same", otherPath: first))
        #expect(
            LoadFailure(path: lib + "/b.so", reason: failures["b.so"]!).description
                == "\(lib)/b.so: duplicate service id test.same: already provided by \(first)")
    }

    @Test func insecureFileMode_isRefusedUnlessAllowed() throws {
        let path = try probe("open.so")
        chmod(path, 0o666)
        let (_, failures) = try loadAll()
        guard case .insecure(let why)? = failures["open.so"] else {
            Issue.record("not refused: \(failures)")
            return
        }
        #expect(why == "file \(path) is writable by other users (mode 0666)")
        let (allowed, _) = try loadAll(allowInsecure: true)
        #expect(allowed.services.count == 1)
    }

    @Test func insecureDirectory_refusesEveryFileInIt() throws {
        try probe("one.so", ["PROBE_ID=\"test.one\""])
        chmod(lib, 0o775)
        let (report, failures) = try loadAll()
        #expect(report.services.isEmpty)
        #expect(failures["one.so"] == .insecure("directory \(lib) is writable by its group (mode 0775)"))
    }

    @Test func fifoAndDirectoryNamedSo_areSkippedWithoutBlocking() throws {
        #expect(mkfifo(lib + "/x.so", 0o644) == 0)
        _ = try scratch.folder("lib/dir.so")
        // If the loader opened the FIFO for reading without O_NONBLOCK, this would hang.
        let (_, failures) = try loadAll()
        #expect(failures["x.so"] == .notRegularFile(kind: "FIFO"))
        #expect(failures["dir.so"] == .notRegularFile(kind: "directory"))
    }

    @Test func otherArchitecture_wordSizeAndType_areNamed() throws {
        let good = try probe("good.so")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let native = ELFImage.hostMachine.name
        var arm = bytes
        arm[18] = ELFImage.hostMachine.number == 183 ? 62 : 183
        arm[19] = 0
        try scratch.write("lib/arm.so", arm)
        bytes[4] = 1  // ELFCLASS32
        try scratch.write("lib/thirtytwo.so", bytes)
        var executable = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        executable[16] = 2  // ET_EXEC
        try scratch.write("lib/exec.so", executable)
        try FileManager.default.removeItem(atPath: good)

        let (_, failures) = try loadAll()
        let other = ELFImage.hostMachine.number == 183 ? "x86_64" : "aarch64"
        #expect(
            failures["arm.so"]
                == .wrongArchitecture(
                    found: "\(other) (64-bit little-endian)", host: "\(native) (64-bit little-endian)"))
        #expect(
            failures["thirtytwo.so"]
                == .wrongArchitecture(
                    found: "\(native) (32-bit little-endian)", host: "\(native) (64-bit little-endian)"))
        #expect(failures["exec.so"] == .notSharedObject(type: "executable"))
    }

    @Test func missingMetadata_isNamed() throws {
        try probe("bare.so", ["PROBE_NO_METADATA"])
        let (_, failures) = try loadAll()
        #expect(failures["bare.so"] == .noMetadata)
    }

    @Test func undefinedSymbol_givesTheDlopenError() throws {
        try probe("undefined.so", ["PROBE_UNDEFINED"])
        let (_, failures) = try loadAll()
        guard case .dlopen(let text)? = failures["undefined.so"] else {
            Issue.record("\(failures)")
            return
        }
        #expect(text.contains("undefined symbol: servicehost_probe_missing_function"))
    }

    @Test func exportedServiceMissingFromMetadata_isRefused() throws {
        try probe("liar.so", ["PROBE_ID=\"test.declared\"", "PROBE_EXPORT_OTHER_ID"])
        let (_, failures) = try loadAll()
        #expect(failures["liar.so"] == .entry("exports service test.undeclared, which its metadata does not declare"))
    }

    @Test func serviceExportedTwice_isRefused() throws {
        try probe("twice.so", ["PROBE_ID=\"test.twice\"", "PROBE_EXPORT_TWICE"])
        let (_, failures) = try loadAll()
        #expect(failures["twice.so"] == .entry("exports service test.twice twice"))
    }

    @Test func declaredServiceNotExported_isRefused() throws {
        try probe("half.so", ["PROBE_ID=\"test.exported\"", "PROBE_DECLARE_ALSO=\"test.declaredonly\""])
        let (_, failures) = try loadAll()
        #expect(
            failures["half.so"] == .entry("its metadata declares service test.declaredonly, which it does not export"))
    }

    @Test func missingDirectory_isAnError() {
        #expect(throws: PluginScanner.DirectoryError.self) {
            try PluginLoader.inspect(directories: [scratch.file("nope")], allowInsecure: false)
        }
    }

    @Test func filesLoadInNameOrder() throws {
        try probe("b.so", ["PROBE_ID=\"test.b\""])
        try probe("a.so", ["PROBE_ID=\"test.a\""])
        try probe("c.so", ["PROBE_ID=\"test.c\""])
        #expect(try loadAll().report.services.map(\.metadata.id) == ["test.a", "test.b", "test.c"])
    }

    /// A descriptor whose id points at its own metadata record (the SDK's C macros) is known
    /// by that address, without reading the id (its page is not touched before the first event);
    /// an id anywhere else is compared as text. The address survives the registry cache.
    @Test func aDescriptorPointingAtItsRecord_isMatchedByAddress() throws {
        try Command.compileC(Repository.fixture("HelloC/hello.c"), to: lib + "/hello.so")
        try probe("probe.so", ["PROBE_ID=\"test.literal\""])
        let state = try DirectoryHandle.open(try scratch.folder("state"))
        let registry = RegistryCache(directory: state, log: nil)
        let read = try PluginLoader.inspect(directories: [lib], allowInsecure: false, registry: registry)
        registry.save(scanned: [lib])
        let cached = try PluginLoader.inspect(
            directories: [lib], allowInsecure: false, registry: RegistryCache(directory: state, log: nil))
        #expect(read.plugins.map(\.metadataAddress) == cached.plugins.map(\.metadataAddress))
        let hello = try #require(cached.plugins.first { $0.path.hasSuffix("/hello.so") })
        let literal = try #require(cached.plugins.first { $0.path.hasSuffix("/probe.so") })
        #expect(hello.metadataAddress != 0 && hello.metadata.services.map(\.idOffset).allSatisfy { $0 >= 0 })

        for (plugin, byAddress) in [(hello, true), (literal, false)] {
            let info = try #require(try PluginLoader.open(plugin).first)
            let id = try #require(info.descriptor.pointee.id)
            let base = try loadAddress(of: plugin)
            let addresses = PluginLoader.IDAddresses(plugin, loadedAt: base)
            #expect(addresses.service(at: id, in: plugin.metadata.services)?.id == (byAddress ? info.metadata.id : nil))
            // One byte off is no record's id; nor is anything when the load address is unknown.
            #expect(addresses.service(at: id + 1, in: plugin.metadata.services) == nil)
            #expect(PluginLoader.IDAddresses(plugin, loadedAt: 0).service(at: id, in: plugin.metadata.services) == nil)
        }
    }

    /// Where the stored copy of `plugin` is mapped from its first byte (`/proc/self/maps`): the
    /// load address of a shared object whose first segment is at 0.
    private func loadAddress(of plugin: PluginInspector.Inspected) throws -> UInt {
        let name = "/" + CopyStore.key(plugin.identity) + "/" + URL(fileURLWithPath: plugin.path).lastPathComponent
        for line in processMaps().split(separator: "\n") where line.hasSuffix(name) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, Int(fields[2], radix: 16) == 0, let start = fields[0].split(separator: "-").first,
                let address = UInt(start, radix: 16)
            else { continue }
            return address
        }
        throw TestFailure("no mapping of \(name) in /proc/self/maps")
    }

    /// This process's `/proc/self/maps`. /proc files report size 0: read to the end by hand.
    private func processMaps() -> String {
        let fd = open("/proc/self/maps", O_RDONLY)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while case let n = read(fd, &chunk, chunk.count), n > 0 { bytes += chunk[..<n] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
