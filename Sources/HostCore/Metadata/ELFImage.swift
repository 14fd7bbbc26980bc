/// Where an ELF image's bytes come from: a plugin file, or memory (tests and fuzz targets).
protocol ELFByteSource {
    /// The size in bytes; no read reaches past it.
    var size: Int { get }
    /// Exactly `count` bytes at `offset`, or fewer only when the source ends first.
    func bytes(at offset: Int, count: Int) throws(LoadFailure.Reason) -> [UInt8]
}

extension ReadOnlyFile: ELFByteSource {
    func bytes(at offset: Int, count: Int) throws(LoadFailure.Reason) -> [UInt8] {
        do { return try read(at: offset, count: count) } catch { throw .system(error) }
    }
}

/// An ELF image held in memory.
struct ELFBytes: ELFByteSource {
    let contents: [UInt8]
    var size: Int { contents.count }

    func bytes(at offset: Int, count: Int) throws(LoadFailure.Reason) -> [UInt8] {
        guard offset >= 0, count >= 0, offset <= contents.count else { return [] }
        return Array(contents[offset..<offset + min(count, contents.count - offset)])
    }
}

/// The parts of an ELF shared object the host reads before running anything in it:
/// the header, the section table, one named section and the dynamic symbol table.
///
/// Only 64-bit little-endian objects for the host's own machine are accepted; anything
/// else is refused with what the file actually is. Every offset and size comes from the
/// file, so each is converted exactly and checked against the file's size before it is
/// used: a corrupt file is a `.corrupt` reason, never a trap or a large allocation.
struct ELFImage {
    struct Section {
        let name: String
        let type: UInt32
        let offset: Int
        let size: Int
        let link: Int
        let entrySize: Int
        /// `sh_flags` and `sh_addr`: where a section loaded with the code (`SHF_ALLOC`) lies,
        /// relative to the library's load address.
        var flags: UInt64 = 0
        var address: UInt64 = 0
    }

    let source: any ELFByteSource
    let sections: [Section]

    private static let dynamicSymbolTable: UInt32 = 11  // SHT_DYNSYM
    private static let noBits: UInt32 = 8  // SHT_NOBITS

    init(file: ReadOnlyFile) throws(LoadFailure.Reason) {
        try self.init(source: file)
    }

    init(source: any ELFByteSource) throws(LoadFailure.Reason) {
        self.source = source
        let fileSize = source.size
        let header = try source.bytes(at: 0, count: 64)
        try Self.checkIdentity(header, fileSize: fileSize)

        let rawTableOffset = header.u64(40)
        let entrySize = Int(header.u16(58))
        let count = Int(header.u16(60))
        let namesIndex = Int(header.u16(62))
        guard count > 0 else { throw .corrupt("the file has no section table (e_shnum is 0)") }
        guard entrySize >= 64 else { throw .corrupt("section table entries of \(entrySize) bytes (64 expected)") }
        guard namesIndex < count else {
            throw .corrupt("the section names are in section \(namesIndex), but the table has \(count)")
        }
        // count and entrySize are 16-bit, so their product cannot overflow; the offset can be anything.
        let tableSize = count * entrySize
        guard let tableOffset = Self.range(rawTableOffset, UInt64(tableSize), within: fileSize) else {
            throw .corrupt(
                "the section table at offset \(Self.hex(rawTableOffset)) (\(count) entries of \(entrySize) bytes)"
                    + " lies past the end of the \(Self.describe(size: fileSize)) file")
        }
        guard tableOffset > 0 else { throw .corrupt("the section table overlaps the ELF header") }

        let table = try Self.exactly(source, at: tableOffset, count: tableSize, "the section table")
        var raw: [(nameOffset: Int, section: Section)] = []
        raw.reserveCapacity(count)
        for index in 0..<count {
            let base = index * entrySize
            let type = table.u32(base + 4)
            let rawOffset = table.u64(base + 24)
            let rawSize = table.u64(base + 32)
            let rawEntrySize = table.u64(base + 56)
            var offset = 0
            var size = 0
            // SHT_NOBITS occupies no bytes in the file (.bss): its offset and size are never read.
            if type != Self.noBits {
                guard let start = Self.range(rawOffset, rawSize, within: fileSize) else {
                    throw .corrupt(
                        "section \(index) (\(Self.hex(rawSize)) bytes at offset \(Self.hex(rawOffset)))"
                            + " lies past the end of the \(Self.describe(size: fileSize)) file")
                }
                offset = start
                size = Int(rawSize)  // within the file, so it fits
            }
            let section = Section(
                name: "", type: type, offset: offset, size: size, link: Int(table.u32(base + 40)),
                entrySize: Int(exactly: rawEntrySize) ?? -1,  // -1: too large for an Int
                flags: table.u64(base + 8), address: table.u64(base + 16))
            raw.append((Int(table.u32(base)), section))
        }
        let namesSection = raw[namesIndex].section
        guard namesSection.type != Self.noBits else {
            throw .corrupt(
                "the section names (section \(namesIndex)) are marked SHT_NOBITS: they have no bytes in the file")
        }
        let names = try Self.exactly(source, at: namesSection.offset, count: namesSection.size, "the section names")
        sections = raw.map { entry in
            let s = entry.section
            return Section(
                name: names.cString(at: entry.nameOffset), type: s.type, offset: s.offset,
                size: s.size, link: s.link, entrySize: s.entrySize, flags: s.flags, address: s.address)
        }
    }

    /// The bytes of the first section called `name`, or nil when there is none.
    func sectionBytes(named name: String) throws(LoadFailure.Reason) -> [UInt8]? {
        try loadedSection(named: name)?.bytes
    }

    /// The bytes of the first section called `name` and its address once loaded (relative to
    /// the library's load address; 0 when the section is not loaded with the code, `SHF_ALLOC`
    /// unset), or nil when there is none.
    func loadedSection(named name: String) throws(LoadFailure.Reason) -> (bytes: [UInt8], address: UInt64)? {
        guard let section = sections.first(where: { $0.name == name }), section.type != Self.noBits else { return nil }
        let bytes = try Self.exactly(source, at: section.offset, count: section.size, "section \(name)")
        return (bytes, section.flags & Self.allocated != 0 ? section.address : 0)
    }

    private static let allocated: UInt64 = 2  // SHF_ALLOC

    /// Whether the dynamic symbol table defines a global or weak symbol called `name`.
    func definesDynamicSymbol(_ name: String) throws(LoadFailure.Reason) -> Bool {
        guard let symbols = sections.first(where: { $0.type == Self.dynamicSymbolTable }) else { return false }
        guard symbols.link < sections.count, sections[symbols.link].type != Self.noBits else {
            throw .corrupt("the dynamic symbol table has no string table")
        }
        // Elf64_Sym is 24 bytes; the file's entry size (from 64 bits) is trusted only when it says so.
        guard symbols.entrySize == 24 else {
            let size = symbols.entrySize < 0 ? "2^63 or more" : String(symbols.entrySize)
            throw .corrupt("the dynamic symbol table has entries of \(size) bytes (an ELF64 symbol is 24)")
        }
        let stringTable = sections[symbols.link]
        let strings = try Self.exactly(
            source, at: stringTable.offset, count: stringTable.size, "the dynamic string table")
        let table = try Self.exactly(source, at: symbols.offset, count: symbols.size, "the dynamic symbol table")
        let wanted = Array(name.utf8)
        for base in stride(from: 0, to: table.count - symbols.entrySize + 1, by: symbols.entrySize) {
            let binding = table[base + 4] >> 4  // STB_GLOBAL 1, STB_WEAK 2
            let sectionIndex = table.u16(base + 6)  // SHN_UNDEF 0: an import, not a definition
            guard binding == 1 || binding == 2, sectionIndex != 0 else { continue }
            if strings.matchesCString(wanted, at: Int(table.u32(base))) { return true }
        }
        return false
    }

    /// `offset` as an Int when `offset + size` stays within `fileSize`; nil when it does not
    /// (or would overflow).
    static func range(_ offset: UInt64, _ size: UInt64, within fileSize: Int) -> Int? {
        guard let start = Int(exactly: offset), let count = Int(exactly: size) else { return nil }
        let (end, overflow) = start.addingReportingOverflow(count)
        guard !overflow, end <= fileSize else { return nil }
        return start
    }

    /// Reads `count` bytes the section table promised; a file that shrank since `fstat` is corrupt.
    private static func exactly(
        _ source: any ELFByteSource, at offset: Int, count: Int, _ what: String
    ) throws(LoadFailure.Reason) -> [UInt8] {
        let bytes = try source.bytes(at: offset, count: count)
        guard bytes.count == count else {
            throw .corrupt(
                "\(what) is cut short at \(bytes.count) of \(count) bytes (the file shrank while it was read)")
        }
        return bytes
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    /// "8 KiB", "1.5 MiB" or "312 bytes": a file size as an error message gives it.
    static func describe(size: Int) -> String {
        if size < 1024 { return size == 1 ? "1-byte" : "\(size)-byte" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(size) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = (value * 10).rounded() / 10
        let text = tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
        return "\(text) \(units[unit])"
    }

    private static func checkIdentity(_ header: [UInt8], fileSize: Int) throws(LoadFailure.Reason) {
        if fileSize == 0 { throw .notELF(detail: "the file is empty") }
        guard header.count >= 4, header[0] == 0x7F, header[1] == 0x45, header[2] == 0x4C, header[3] == 0x46 else {
            throw .notELF(detail: describeStart(header))
        }
        guard header.count >= 64 else { throw .corrupt("the ELF header is cut short at \(header.count) bytes") }
        let wordSize = header[4] == 2 ? 64 : 32
        let endian = header[5] == 1 ? "little-endian" : "big-endian"
        let machine = header.u16(18, bigEndian: header[5] == 2)
        if header[4] != 2 || header[5] != 1 || machine != hostMachine.number {
            throw .wrongArchitecture(
                found: "\(machineName(machine)) (\(wordSize)-bit \(endian))",
                host: "\(hostMachine.name) (64-bit little-endian)")
        }
        switch header.u16(16) {
        case 3: return  // ET_DYN
        case 1: throw .notSharedObject(type: "relocatable object (.o)")
        case 2: throw .notSharedObject(type: "executable")
        case 4: throw .notSharedObject(type: "core dump")
        case let other: throw .notSharedObject(type: "file of type \(other)")
        }
    }

    private static func describeStart(_ bytes: [UInt8]) -> String {
        let start = bytes.prefix(16)
        if start.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) }) {
            let text = String(decoding: start, as: UTF8.self)
                .replacingAll("\n", with: "\\n").replacingAll("\t", with: "\\t").replacingAll("\r", with: "\\r")
            return "it is text, starting \"\(text)\""
        }
        return "it starts with bytes "
            + start.prefix(8).map { byte in
                let hex = String(byte, radix: 16)
                return hex.count == 1 ? "0" + hex : hex
            }.joined(separator: " ")
    }

    static let hostMachine: (number: UInt16, name: String) = {
        #if arch(x86_64)
            (62, "x86_64")
        #elseif arch(arm64)
            (183, "aarch64")
        #elseif arch(riscv64)
            (243, "riscv64")
        #else
            (0, "unknown")
        #endif
    }()

    static func machineName(_ number: UInt16) -> String {
        switch number {
        case 3: "i386"
        case 8: "mips"
        case 20: "powerpc"
        case 21: "ppc64"
        case 22: "s390x"
        case 40: "arm"
        case 62: "x86_64"
        case 183: "aarch64"
        case 243: "riscv"
        default: "ELF machine \(number)"
        }
    }
}

extension [UInt8] {
    func u16(_ offset: Int, bigEndian: Bool = false) -> UInt16 {
        guard offset >= 0, offset + 2 <= count else { return 0 }
        return bigEndian
            ? UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
            : UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    func u32(_ offset: Int) -> UInt32 {
        guard offset >= 0, offset + 4 <= count else { return 0 }
        return UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16
            | UInt32(self[offset + 3]) << 24
    }

    func u64(_ offset: Int) -> UInt64 {
        guard offset >= 0, offset + 8 <= count else { return 0 }
        return UInt64(u32(offset)) | UInt64(u32(offset + 4)) << 32
    }

    /// The NUL-terminated string at `offset` (to the end when unterminated), decoded as UTF-8.
    func cString(at offset: Int, limit: Int? = nil) -> String {
        guard offset >= 0, offset < count else { return "" }
        let end = Swift.min(count, offset + (limit ?? count))
        let stop = self[offset..<end].firstIndex(of: 0) ?? end
        return String(decoding: self[offset..<stop], as: UTF8.self)
    }

    /// Whether the NUL-terminated string at `offset` equals `wanted`, without making a String.
    func matchesCString(_ wanted: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + wanted.count < count else { return false }
        for (i, byte) in wanted.enumerated() where self[offset + i] != byte { return false }
        return self[offset + wanted.count] == 0
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
