import Glibc

/// The few functions of the system's OpenSSL 3 `libcrypto` the host uses to check what it loads
/// (SHA-256 pins, minisign's Ed25519 and BLAKE2b-512), loaded with `dlopen` at the first use: the
/// host contains no cryptography of its own, and runs without the library (a pinned or signed
/// service is then refused, saying why; nothing is loaded unchecked).
final class LibCrypto: @unchecked Sendable {
    // @unchecked: every member is a `let` set once in `init` (function addresses of a library
    // never closed); OpenSSL 3's one-shot digest and verify calls are thread-safe.

    /// Why the library cannot be used: the `dlopen` or `dlsym` error.
    struct Unavailable: Error, Sendable, Equatable {
        let reason: String
    }

    /// The library, or why it cannot be used; loaded once per process. `SERVICEHOST_LIBCRYPTO`
    /// names another library to open instead (the tests name a missing one, to see the host
    /// refuse what it cannot check).
    static let shared: Result<LibCrypto, Unavailable> = load(
        getenv("SERVICEHOST_LIBCRYPTO").map { String(cString: $0) } ?? LibCrypto.libraryName)

    /// The soname opened: OpenSSL 3's (the ABI the declarations below follow).
    static let libraryName = "libcrypto.so.3"

    // The declarations, from OpenSSL 3's <openssl/evp.h>: every pointer type is opaque here.
    private typealias GetMD = @convention(c) () -> OpaquePointer?
    private typealias Digest =
        @convention(c) (
            UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?, OpaquePointer?,
            OpaquePointer?
        ) -> Int32
    private typealias NewRawPublicKey =
        @convention(c) (Int32, OpaquePointer?, UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    private typealias FreeKey = @convention(c) (OpaquePointer?) -> Void
    private typealias NewContext = @convention(c) () -> OpaquePointer?
    private typealias FreeContext = @convention(c) (OpaquePointer?) -> Void
    private typealias DigestVerifyInit =
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, OpaquePointer?, OpaquePointer?
        ) -> Int32
    private typealias DigestVerify =
        @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int) -> Int32
    private typealias DigestInit = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    private typealias DigestUpdate = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    private typealias DigestFinal =
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32

    /// `EVP_PKEY_ED25519` (`NID_ED25519`).
    private static let ed25519: Int32 = 1087

    private let sha256: GetMD
    private let blake2b512: GetMD
    private let digest: Digest
    private let newRawPublicKey: NewRawPublicKey
    private let freeKey: FreeKey
    private let newContext: NewContext
    private let freeContext: FreeContext
    private let digestVerifyInit: DigestVerifyInit
    private let digestVerify: DigestVerify
    private let digestInit: DigestInit
    private let digestUpdate: DigestUpdate
    private let digestFinal: DigestFinal

    private init(_ handle: UnsafeMutableRawPointer) throws(Unavailable) {
        func symbol<T>(_ name: String, as type: T.Type) throws(Unavailable) -> T {
            _ = dlerror()
            guard let address = dlsym(handle, name) else {
                throw Unavailable(
                    reason: "\(LibCrypto.libraryName) has no \(name): \(dlerror().map { String(cString: $0) } ?? "")")
            }
            return unsafeBitCast(address, to: type)
        }
        sha256 = try symbol("EVP_sha256", as: GetMD.self)
        blake2b512 = try symbol("EVP_blake2b512", as: GetMD.self)
        digest = try symbol("EVP_Digest", as: Digest.self)
        newRawPublicKey = try symbol("EVP_PKEY_new_raw_public_key", as: NewRawPublicKey.self)
        freeKey = try symbol("EVP_PKEY_free", as: FreeKey.self)
        newContext = try symbol("EVP_MD_CTX_new", as: NewContext.self)
        freeContext = try symbol("EVP_MD_CTX_free", as: FreeContext.self)
        digestVerifyInit = try symbol("EVP_DigestVerifyInit", as: DigestVerifyInit.self)
        digestVerify = try symbol("EVP_DigestVerify", as: DigestVerify.self)
        digestInit = try symbol("EVP_DigestInit_ex", as: DigestInit.self)
        digestUpdate = try symbol("EVP_DigestUpdate", as: DigestUpdate.self)
        digestFinal = try symbol("EVP_DigestFinal_ex", as: DigestFinal.self)
    }

    /// Opens `name` (a test names one that does not exist, to see the host refuse without it).
    static func load(_ name: String) -> Result<LibCrypto, Unavailable> {
        _ = dlerror()
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            let error = dlerror().map { String(cString: $0) } ?? "dlopen failed"
            return .failure(Unavailable(reason: "cannot load \(name) (OpenSSL 3): \(error)"))
        }
        do { return .success(try LibCrypto(handle)) } catch { return .failure(error) }
    }

    /// SHA-256 of `bytes` (32 bytes), or nil when libcrypto fails.
    func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? { hash(bytes, sha256(), 32) }

    /// BLAKE2b-512 of `bytes` (64 bytes, minisign's prehash), or nil when libcrypto fails.
    func blake2b512(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? { hash(bytes, blake2b512(), 64) }

    private func hash(_ bytes: UnsafeRawBufferPointer, _ md: OpaquePointer?, _ size: Int) -> [UInt8]? {
        guard let md else { return nil }
        var out = [UInt8](repeating: 0, count: size)
        var written: UInt32 = 0
        // A zero-length buffer may have no address; libcrypto wants one all the same.
        let ok = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { empty in
            out.withUnsafeMutableBufferPointer {
                digest(
                    bytes.baseAddress ?? UnsafeRawPointer(empty.baseAddress!), bytes.count, $0.baseAddress, &written,
                    md, nil)
            }
        }
        return ok == 1 && Int(written) == size ? out : nil
    }

    /// SHA-256 (32 bytes) of the pieces `read` hands to the function it is given, in order: a
    /// file streamed rather than held whole. Nil when libcrypto fails or `read` returns false.
    func sha256(_ read: ((UnsafeRawBufferPointer) -> Void) -> Bool) -> [UInt8]? {
        streamed([(sha256(), 32)], read)?.first
    }

    /// SHA-256 (32 bytes) and BLAKE2b-512 (64 bytes) in one pass over the pieces `read` hands to
    /// the function it is given, in order: what is too large to hold whole (a bundle, minisign's
    /// prehashed form). Nil when libcrypto fails or `read` returns false (it could not read).
    func sha256AndBLAKE2b512(_ read: ((UnsafeRawBufferPointer) -> Void) -> Bool) -> (
        sha256: [UInt8], blake2b512: [UInt8]
    )? {
        guard let digests = streamed([(sha256(), 32), (blake2b512(), 64)], read) else { return nil }
        return (digests[0], digests[1])
    }

    /// The digests `kinds` (each an `EVP_MD` and its size) of the pieces `read` hands over, all
    /// in one pass; nil when libcrypto fails or `read` returns false.
    private func streamed(
        _ kinds: [(md: OpaquePointer?, size: Int)], _ read: ((UnsafeRawBufferPointer) -> Void) -> Bool
    ) -> [[UInt8]]? {
        let contexts = kinds.map { _ in newContext() }
        defer { contexts.forEach(freeContext) }
        for (context, kind) in zip(contexts, kinds) {
            guard let context, digestInit(context, kind.md, nil) == 1 else { return nil }
        }
        var updated = true
        let complete = read { piece in
            guard updated, let base = piece.baseAddress, piece.count > 0 else { return }
            updated = contexts.allSatisfy { digestUpdate($0, base, piece.count) == 1 }
        }
        guard complete, updated else { return nil }
        var digests: [[UInt8]] = []
        for (context, kind) in zip(contexts, kinds) {
            guard let context, let digest = finish(context, kind.size) else { return nil }
            digests.append(digest)
        }
        return digests
    }

    private func finish(_ context: OpaquePointer, _ size: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: size)
        var written: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { digestFinal(context, $0.baseAddress, &written) }
        return ok == 1 && Int(written) == size ? out : nil
    }

    /// Whether `signature` (64 bytes) is `publicKey`'s (32 bytes) Ed25519 signature of `message`.
    func verifyEd25519(publicKey: [UInt8], signature: [UInt8], message: UnsafeRawBufferPointer) -> Bool {
        guard publicKey.count == 32, signature.count == 64 else { return false }
        guard let key = publicKey.withUnsafeBufferPointer({ newRawPublicKey(Self.ed25519, nil, $0.baseAddress, 32) })
        else { return false }
        defer { freeKey(key) }
        guard let context = newContext() else { return false }
        defer { freeContext(context) }
        guard digestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { empty in
            signature.withUnsafeBufferPointer { signature in
                digestVerify(
                    context, signature.baseAddress, 64,
                    (message.baseAddress ?? UnsafeRawPointer(empty.baseAddress!)).assumingMemoryBound(to: UInt8.self),
                    message.count) == 1
            }
        }
    }
}
