// Fuzz target `minisign`: bytes as a minisign signature file (libX.so.minisig beside a plugin)
// and as a public key file and line (`trustedKeys`), through the host's minisign parser; and as
// the store's verdict file (`STORE/.verdicts`, VerdictFile): whole, and as records past a header
// (the checksum would keep most inputs from the record reader).
@testable import HostCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        let signature = try Minisign.Signature(file: bytes)
        // What the parser accepts has the sizes the verifier relies on.
        guard signature.keyID.count == 8, signature.signature.count == 64, signature.globalSignature.count == 64
        else { fatalError("accepted a signature of the wrong size") }
        guard signature.keyIDText.utf8.count == 16 else { fatalError("a key id that is not 16 digits") }
    } catch {
        guard !error.reason.isEmpty else { fatalError("an error without a reason") }
    }
    do {
        let key = try Minisign.PublicKey(file: bytes)
        guard key.keyID.count == 8, key.key.count == 32 else { fatalError("accepted a key of the wrong size") }
    } catch {
        guard !error.reason.isEmpty else { fatalError("an error without a reason") }
    }
    if bytes.count <= 256, let key = try? Minisign.PublicKey(base64: String(decoding: bytes, as: UTF8.self)) {
        guard key.key.count == 32 else { fatalError("accepted a key of the wrong size") }
    }
    do {
        _ = try VerdictFile.decode(bytes)
    } catch {
        guard !error.reason.isEmpty else { fatalError("an error without a reason") }
    }
    for records in [bytes[...], bytes.dropFirst(VerdictFile.magic.count + 8)] {
        do {
            let entries = try VerdictFile.decode(records: records)
            // What is read is written back the same.
            guard (try? VerdictFile.decode(VerdictFile.encode(entries))) == entries else {
                fatalError("verdicts do not read back as they were written")
            }
        } catch {
            guard !error.reason.isEmpty else { fatalError("an error without a reason") }
        }
    }
    return 0
}
