#!/usr/bin/env python3
# Writes the `registry` fuzz target's seed corpus (Tests/Fuzz/Corpus/registry/) in RegistryFile's
# format 4 (grouped by directory, with a directory of the groups in the header, and each
# section's address), from the entries of a format-1 file written by the host (argument 1: the
# corpus's other-format.bin, which stays; format-2.bin and format-3.bin are the same entries in
# formats 2 and 3).
#   python3 Tests/Fuzz/registry/make-seeds.py Tests/Fuzz/Corpus/registry/other-format.bin
import struct, sys, os

OUT = os.path.join(os.path.dirname(__file__), "..", "Corpus", "registry")
HOST = b"servicehost 0.1.0"
PRIME, BASIS, MASK = 0x100000001B3, 0xCBF29CE484222325, (1 << 64) - 1

def checksum(data):
    # RegistryFile.checksum: FNV-1a over little-endian 8-byte words, then the tail bytes.
    h = BASIS
    words = len(data) // 8
    for i in range(words):
        h = ((h ^ struct.unpack_from("<Q", data, i * 8)[0]) * PRIME) & MASK
    for b in data[words * 8:]:
        h = ((h ^ b) * PRIME) & MASK
    return h

def blob(b): return struct.pack("<I", len(b)) + b

def read_v1(data):
    # The format-1 layout: header, u32 count, entries (path, 5 integers, bools, section), FNV.
    at = 4 + 2
    n = struct.unpack_from("<I", data, at)[0]; at += 4 + n
    count = struct.unpack_from("<I", data, at)[0]; at += 4
    entries = []
    for _ in range(count):
        n = struct.unpack_from("<I", data, at)[0]; path = data[at + 4:at + 4 + n]; at += 4 + n
        ints = data[at:at + 40]; at += 40
        defines, present = data[at], data[at + 1]; at += 2
        section = None
        if present:
            n = struct.unpack_from("<I", data, at)[0]; section = data[at + 4:at + 4 + n]; at += 4 + n
        entries.append((path, ints, defines, section))
    return entries

# The address a present section is given (a format-1 file did not record one): where a small
# C plugin's section lies.
ADDRESS = struct.pack("<Q", 0x2000)

def group(directory, files, count=None, fmt=4):
    body = blob(directory) + struct.pack("<I", len(files) if count is None else count)
    for name, ints, defines, section in files:
        body += blob(name) + ints + bytes([defines, section is not None])
        if section is not None:
            body += blob(section) + (ADDRESS if fmt >= 4 else b"")
    return struct.pack("<IQ", len(body), checksum(body)) + body

def registry(groups, host=HOST, fmt=4, count=None, lengths=None):
    # groups: (directory, record) pairs, written in the order given.
    if fmt == 2:
        header = b"SHRC" + struct.pack("<H", fmt) + blob(host) + struct.pack("<I", len(groups) if count is None else count)
        return header + struct.pack("<Q", checksum(header)) + b"".join(r for _, r in groups)
    length = 4 + 2 + 4 + 4 + len(host) + 4 + sum(4 + len(d) + 8 + 4 for d, _ in groups) + 8
    header = b"SHRC" + struct.pack("<HI", fmt, length) + blob(host) + struct.pack("<I", len(groups) if count is None else count)
    offset = length
    for index, (d, r) in enumerate(groups):
        header += blob(d) + struct.pack("<QI", offset, len(r) if lengths is None else lengths[index])
        offset += len(r)
    return header + struct.pack("<Q", checksum(header)) + b"".join(r for _, r in groups)

def split(path):
    slash = path.rfind(b"/")
    return path[:slash + 1], path[slash + 1:]

def grouped(entries, rename=None, fmt=4):
    dirs = {}
    for path, ints, defines, section in entries:
        d, name = split(path)
        dirs.setdefault(rename or d, []).append((name, ints, defines, section))
    return [(d, group(d, sorted(f), fmt=fmt)) for d, f in sorted(dirs.items())]

def flip(data, at):
    data = bytearray(data); data[at] ^= 0x20; return bytes(data)

old = open(sys.argv[1], "rb").read()
entries = read_v1(old)
one_dir = grouped(entries)
two = registry(one_dir)
# Two directories: the first plugin alone in another directory.
first, rest = entries[:1], entries[1:]
a = grouped(first, rename=b"/opt/other/")
b = grouped(rest)
two_dirs = registry(a + b)
seeds = {
    "two-plugins.bin": two,
    "two-directories.bin": two_dirs,
    "empty.bin": registry([]),
    "huge-count.bin": registry([], count=0xFFFFFFFF),
    "other-version.bin": registry([], host=b"servicehost 9.9.9"),
    "other-format.bin": old,
    "format-2.bin": registry(grouped(entries, fmt=2), fmt=2),
    "format-3.bin": registry(grouped(entries, fmt=3), fmt=3),
    "bad-checksum.bin": flip(two, len(two) - 20),
    "bad-header.bin": flip(two, 41),  # in the directory of the groups
    "truncated.bin": two[:-9],
    # The second directory's group damaged: the first stays readable on its own.
    "one-group-corrupt.bin": flip(two_dirs, len(two_dirs) - 20),
    "repeated-group.bin": registry(one_dir + one_dir),
    "huge-entry-count.bin": registry([(b"/opt/x/", group(b"/opt/x/", [], count=0xFFFFFFFF))]),
    # A sound header (its checksum right) whose group says 4 GiB: refused before it is read.
    "huge-group-length.bin": registry([(b"/opt/x/", group(b"/opt/x/", []))], lengths=[0xFFFFFFFF]),
    "no-section.bin": registry([(b"/opt/x/", group(b"/opt/x/", [(b"a.so", bytes(40), 1, None)]))]),
    "bad-section.bin": registry([(b"/opt/x/", group(b"/opt/x/", [(b"a.so", bytes(40), 1, b"\xff" * 40)]))]),
    "not-a-name.bin": registry([(b"/opt/x/", group(b"/opt/x/", [(b"sub/a.so", bytes(40), 1, None)]))]),
    # The header names one directory, the group inside another.
    "misnamed-group.bin": registry([(b"/opt/y/", group(b"/opt/x/", [(b"a.so", bytes(40), 1, None)]))]),
}
for old_name in os.listdir(OUT):
    os.remove(os.path.join(OUT, old_name))
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
