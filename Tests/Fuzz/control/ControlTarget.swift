// Fuzz target `control`: one control socket request line through ControlRequest.parse, with
// the host's default payload limit.
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = ControlRequest.parse(bytes, maxPayload: 65536)
    return 0
}
