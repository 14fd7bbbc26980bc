// Fuzz target `manifest`: a servicehost.json through servicehost-metagen's reader and, when
// it is accepted, its record and Swift writers (scripts/fuzz compiles Manifest.swift in).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    guard let specs = try? parseManifest(bytes) else { return 0 }
    _ = generate(specs, manifestPath: "servicehost.json")
    return 0
}
