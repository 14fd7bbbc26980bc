// Fuzz target `control`: one control socket request line through ControlRequest.parse, with
// the host's default payload limit; and every line the fast path (PlainRequest) takes, read
// again by the full parser, which must agree (the same command and the same id).
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = ControlRequest.parse(bytes, maxPayload: 65536)
    if let plain = bytes.withUnsafeBytes({ PlainRequest.parse($0) }) {
        let full = bytes.withUnsafeBytes { ControlRequest.parseFully($0, maxPayload: 65536) }
        guard case .success(let request) = full, "\(request.command)" == "\(plain.command)",
            request.id == plain.id, request.id?.serialized == plain.id?.serialized
        else { fatalError("the fast path and the full parser disagree on \(String(decoding: bytes, as: UTF8.self))") }
    }
    return 0
}
