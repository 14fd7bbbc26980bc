#!/usr/bin/env python3
# Writes the `registry` fuzz target's seed corpus (Tests/Fuzz/Corpus/registry/) in RegistryFile's
# format 2 (grouped by directory), from the entries of a format-1 file written by the host
# (argument 1: the old two-plugins.bin, which becomes other-format.bin).
#   python3 Tests/Fuzz/registry/make-seeds.py OLD-two-plugins.bin
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

def group(directory, files, count=None):
    body = blob(directory) + struct.pack("<I", len(files) if count is None else count)
    for name, ints, defines, section in files:
        body += blob(name) + ints + bytes([defines, section is not None]) + (blob(section) if section is not None else b"")
    return struct.pack("<IQ", len(body), checksum(body)) + body

def registry(groups, host=HOST, fmt=2, count=None):
    header = b"SHRC" + struct.pack("<H", fmt) + blob(host) + struct.pack("<I", len(groups) if count is None else count)
    return header + struct.pack("<Q", checksum(header)) + b"".join(groups)

def split(path):
    slash = path.rfind(b"/")
    return path[:slash + 1], path[slash + 1:]

def grouped(entries, rename=None):
    dirs = {}
    for path, ints, defines, section in entries:
        d, name = split(path)
        dirs.setdefault(rename or d, []).append((name, ints, defines, section))
    return [group(d, sorted(f)) for d, f in sorted(dirs.items())]

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
    "bad-checksum.bin": flip(two, len(two) - 20),
    "bad-header.bin": flip(two, 30),
    "truncated.bin": two[:-9],
    # The second directory's group damaged: the first stays readable on its own.
    "one-group-corrupt.bin": flip(two_dirs, len(two_dirs) - 20),
    "repeated-group.bin": registry(one_dir + one_dir),
    "huge-entry-count.bin": registry([group(b"/opt/x/", [], count=0xFFFFFFFF)]),
    "no-section.bin": registry([group(b"/opt/x/", [(b"a.so", bytes(40), 1, None)])]),
    "bad-section.bin": registry([group(b"/opt/x/", [(b"a.so", bytes(40), 1, b"\xff" * 40)])]),
    "not-a-name.bin": registry([group(b"/opt/x/", [(b"sub/a.so", bytes(40), 1, None)])]),
}
for old_name in os.listdir(OUT):
    os.remove(os.path.join(OUT, old_name))
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
