extension BundleArchive {
    /// The ustar archive of `files` (name, bytes) as ``init(_:)`` reads it, the same bytes for
    /// the same files whatever the machine: `host fleet publish` packs a bundle with this, so its
    /// digest depends on the files alone (mode 0644, owner 0, time 0, names in the given order).
    /// The caller gives plain names (no `/`), at most 100 bytes each.
    public static func pack(_ files: [(name: String, bytes: [UInt8])]) -> [UInt8] {
        var archive: [UInt8] = []
        for file in files {
            var header = [UInt8](repeating: 0, count: block)
            func put(_ text: String, at offset: Int) {
                for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte }
            }
            /// An octal number in `count` bytes: digits, then a NUL.
            func octal(_ value: Int, at offset: Int, count: Int) {
                let digits = String(value, radix: 8)
                put(String(repeating: "0", count: max(0, count - 1 - digits.count)) + digits, at: offset)
            }
            put(file.name, at: 0)
            octal(0o644, at: 100, count: 8)
            octal(0, at: 108, count: 8)
            octal(0, at: 116, count: 8)
            octal(file.bytes.count, at: 124, count: 12)
            octal(0, at: 136, count: 12)
            header[156] = UInt8(ascii: "0")
            put("ustar", at: 257)
            put("00", at: 263)
            // The checksum: the header's bytes with its own field as spaces, six digits, NUL, space.
            let sum = header.enumerated().reduce(0) { $0 + ((148..<156).contains($1.offset) ? 32 : Int($1.element)) }
            octal(sum, at: 148, count: 7)
            header[155] = UInt8(ascii: " ")
            archive += header
            archive += file.bytes
            archive += [UInt8](repeating: 0, count: (block - file.bytes.count % block) % block)
        }
        return archive + [UInt8](repeating: 0, count: 2 * block)
    }
}
