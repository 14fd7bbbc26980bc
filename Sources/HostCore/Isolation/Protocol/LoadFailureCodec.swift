/// A loader's reason on the wire (`openFailed`), so a plugin refused inside a worker gets
/// exactly the message it gets in the host.
enum LoadFailureCodec {
    static func encode(_ reason: LoadFailure.Reason, into w: inout WireWriter) {
        switch reason {
        case .notRegularFile(let kind):
            w.u8(1)
            w.string(kind)
        case .insecure(let why):
            w.u8(2)
            w.string(why)
        case .system(let error):
            w.u8(3)
            w.string(error.operation)
            w.string(error.path)
            w.i32(error.errno)
        case .notELF(let detail):
            w.u8(4)
            w.string(detail)
        case .wrongArchitecture(let found, let host):
            w.u8(5)
            w.string(found)
            w.string(host)
        case .notSharedObject(let type):
            w.u8(6)
            w.string(type)
        case .corrupt(let detail):
            w.u8(7)
            w.string(detail)
        case .noEntrySymbol: w.u8(8)
        case .noMetadata: w.u8(9)
        case .invalidMetadata(let detail):
            w.u8(10)
            w.string(detail)
        case .abiMismatch(let pluginMin, let pluginMax, let hostMin, let hostMax):
            w.u8(11)
            w.u32(pluginMin)
            w.u32(pluginMax)
            w.u32(hostMin)
            w.u32(hostMax)
        case .duplicateServiceID(let id, let otherPath):
            w.u8(12)
            w.string(id)
            w.string(otherPath)
        case .dlopen(let error):
            w.u8(13)
            w.string(error)
        case .entry(let detail):
            w.u8(14)
            w.string(detail)
        case .attachFailed(let id, let result):
            w.u8(15)
            w.string(id)
            w.i32(result)
        case .worker(let detail):
            w.u8(16)
            w.string(detail)
        case .replacementLimit(let limit):
            w.u8(17)
            w.u32(UInt32(clamping: limit))
        case .changed: w.u8(18)
        case .digestMismatch(let service, let expected, let actual):
            w.u8(19)
            w.string(service)
            w.string(expected)
            w.string(actual)
        case .signature(let problem):
            w.u8(20)
            switch problem {
            case .missing(let path):
                w.u8(1)
                w.string(path)
            case .malformed(let detail):
                w.u8(2)
                w.string(detail)
            case .untrusted(let keyID):
                w.u8(3)
                w.string(keyID)
            case .revoked(let keyID):
                w.u8(4)
                w.string(keyID)
            case .mismatch(let keyID, let detail):
                w.u8(5)
                w.string(keyID)
                w.string(detail)
            }
        case .cryptoUnavailable(let detail):
            w.u8(21)
            w.string(detail)
        }
    }

    static func decode(_ r: inout WireReader) throws(WireError) -> LoadFailure.Reason {
        let tag = try r.u8("reason")
        let reason: LoadFailure.Reason
        switch tag {
        case 1: reason = .notRegularFile(kind: try r.string("kind"))
        case 2: reason = .insecure(try r.string("detail"))
        case 3:
            reason = .system(
                SystemError(operation: try r.string("operation"), path: try r.string("path"), errno: try r.i32("errno"))
            )
        case 4: reason = .notELF(detail: try r.string("detail"))
        case 5: reason = .wrongArchitecture(found: try r.string("found"), host: try r.string("host"))
        case 6: reason = .notSharedObject(type: try r.string("type"))
        case 7: reason = .corrupt(try r.string("detail"))
        case 8: reason = .noEntrySymbol
        case 9: reason = .noMetadata
        case 10: reason = .invalidMetadata(try r.string("detail"))
        case 11:
            reason = .abiMismatch(
                pluginMin: try r.u32("abi"), pluginMax: try r.u32("abi"), hostMin: try r.u32("abi"),
                hostMax: try r.u32("abi"))
        case 12: reason = .duplicateServiceID(id: try r.string("id"), otherPath: try r.string("path"))
        case 13: reason = .dlopen(try r.string("error"))
        case 14: reason = .entry(try r.string("detail"))
        case 15: reason = .attachFailed(id: try r.string("id"), result: try r.i32("result"))
        case 16: reason = .worker(try r.string("detail"))
        case 17: reason = .replacementLimit(limit: Int(try r.u32("limit")))
        case 18: reason = .changed
        case 19:
            reason = .digestMismatch(
                service: try r.string("service"), expected: try r.string("expected"), actual: try r.string("actual"))
        case 20:
            let kind = try r.u8("signature problem")
            switch kind {
            case 1: reason = .signature(.missing(try r.string("path")))
            case 2: reason = .signature(.malformed(try r.string("detail")))
            case 3: reason = .signature(.untrusted(keyID: try r.string("keyID")))
            case 4: reason = .signature(.revoked(keyID: try r.string("keyID")))
            case 5: reason = .signature(.mismatch(keyID: try r.string("keyID"), detail: try r.string("detail")))
            default: throw .malformed("signature problem \(kind)")
            }
        case 21: reason = .cryptoUnavailable(try r.string("detail"))
        default: throw .malformed("load failure reason \(tag)")
        }
        try r.finish("the load failure")
        return reason
    }
}
