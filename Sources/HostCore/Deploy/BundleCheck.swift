import Dispatch
import Glibc
import ServiceJSON

/// The check of a fleet bundle before it is unpacked (issue 41): its size, its SHA-256 and its
/// minisign signature, by the host's trusted keys (`trustedKeys`, `revokedKeys`). MQTTBridge
/// asks for it with `{"command":"deploy","action":"verify",…}` through `sh_host.control`, so the
/// plugin needs no cryptography of its own and the keys stay the host's.
///
/// A bundle is verified whatever `signatures` says: code that came over a broker is deployed
/// only when a key the host trusts signed it.
extension Host {
    /// What a check found: ``verified`` with the signer, or the reason (a stable word) and detail.
    public struct BundleVerdict: Error, Sendable, Equatable {
        /// Whether the bundle may be unpacked.
        public var verified: Bool
        /// When not verified: `unreadable`, `sizeMismatch`, `digestMismatch`, `badSignature`,
        /// `untrustedKey`, `revokedKey`, `signatureMismatch`, `noTrustedKeys`, `cryptoUnavailable`.
        public var reason: String?
        /// The sentence saying why, naming the file.
        public var detail: String?
        /// The signer's key id (16 hex digits) and trusted comment, when verified.
        public var keyID: String?
        public var trustedComment: String?

        static func refused(_ reason: String, _ detail: String) -> BundleVerdict {
            BundleVerdict(verified: false, reason: reason, detail: detail)
        }

        /// The reply's `bundle` member.
        var json: JSONValue {
            var object: [String: JSONValue] = ["verified": .bool(verified)]
            if let reason { object["reason"] = .string(reason) }
            if let detail { object["detail"] = .string(detail) }
            if let keyID { object["keyId"] = .string(keyID) }
            if let trustedComment { object["trustedComment"] = .string(trustedComment) }
            return .object(object)
        }
    }

    /// The largest bundle checked: what a fleet host is expected to run, with room.
    nonisolated public static let maxBundleSize = 256 << 20

    /// Checks the bundle in `file` against the `size`, `sha256` (64 hex digits) and minisign
    /// `signature` (the `.minisig` file's text) the desired state gave; `done` gets the verdict
    /// on the main thread.
    ///
    /// Up to 256 MiB is read and hashed, which takes the better part of a second: not on the
    /// main thread, which goes on serving services and the control socket meanwhile, but on a
    /// serial queue of its own (one bundle at a time). A prehashed signature (`ED`, minisign's
    /// default) has the bundle streamed through both digests in 64 KiB pieces; a legacy one (`Ed`)
    /// reads it into memory whole, as Ed25519 over the bytes themselves needs. The trust settings
    /// are those in force when the check was asked for.
    public func verifyBundle(
        file: String, size: Int, sha256: String, signature: String,
        done: @escaping @MainActor (BundleVerdict) -> Void
    ) {
        let trust = configuration.trust
        let finish = MainThreadOnly(done)
        Self.bundleChecks.async {
            Self.waitForTestGate()
            let verdict = Self.verifyBundle(file: file, size: size, sha256: sha256, signature: signature, trust: trust)
            DispatchQueue.main.async { MainActor.assumeIsolated { finish.value(verdict) } }
        }
    }

    /// The queue bundles are checked on, one at a time.
    nonisolated private static let bundleChecks = DispatchQueue(label: "servicehost.bundle-check", qos: .utility)

    /// `SERVICEHOST_BUNDLE_CHECK_GATE=FIFO`: each check first waits for a byte on that FIFO, so a
    /// test can hold a check in progress and see the host serve meanwhile. Unset (always,
    /// outside that test): nothing happens.
    nonisolated private static func waitForTestGate() {
        guard let gate = getenv("SERVICEHOST_BUNDLE_CHECK_GATE") else { return }
        let descriptor = Glibc.open(gate, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        var byte: UInt8 = 0
        _ = Glibc.read(descriptor, &byte, 1)
        Glibc.close(descriptor)
    }

    nonisolated static func verifyBundle(
        file: String, size: Int, sha256: String, signature: String, trust: TrustSettings
    ) -> BundleVerdict {
        // The key first: a bundle no trusted key signed is refused before it is read.
        let signer: BundleSigner
        do { signer = try bundleSigner(signature, trust: trust) } catch { return error }
        let opened: ReadOnlyFile
        do { opened = try ReadOnlyFile(path: file) } catch { return .refused("unreadable", "\(file): \(error)") }
        guard opened.status.st_mode & S_IFMT == S_IFREG else {
            return .refused("unreadable", "\(file) is not a regular file")
        }
        guard opened.size == size else {
            return .refused("sizeMismatch", "\(file) is \(opened.size) bytes, the desired state says \(size)")
        }
        guard size <= maxBundleSize else {
            return .refused("sizeMismatch", "\(file) is \(size) bytes, over the limit of \(maxBundleSize)")
        }
        // minisign's default (`ED`) signs the file's BLAKE2b-512: both digests in one streamed
        // pass, never the bundle whole in memory. A legacy `Ed` signature is over the bytes
        // themselves, which Ed25519 needs whole (it hashes its message twice): read into memory.
        guard signer.signature.prehashed else {
            let bytes: [UInt8]
            do { bytes = try opened.read(at: 0, count: size) } catch {
                return .refused("unreadable", "\(file): \(error)")
            }
            guard bytes.count == size else {
                return .refused("sizeMismatch", "\(file) gave \(bytes.count) bytes, the desired state says \(size)")
            }
            return verifyBundle(bytes, file: file, sha256: sha256, signer: signer)
        }
        let crypto: LibCrypto
        switch LibCrypto.shared {
        case .success(let loaded): crypto = loaded
        case .failure(let error): return .refused("cryptoUnavailable", error.reason)
        }
        var failure: SystemError?
        var read = 0
        let digests = crypto.sha256AndBLAKE2b512 { give in
            do throws(SystemError) {
                read = try Self.stream(opened, size: size, to: give)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { return .refused("unreadable", "\(file): \(failure)") }
        guard read == size else {
            return .refused("sizeMismatch", "\(file) gave \(read) bytes, the desired state says \(size)")
        }
        guard let digests else { return .refused("cryptoUnavailable", "EVP_Digest(SHA-256, BLAKE2b-512) failed") }
        return verdict(
            digest: digests.0, message: digests.1, file: file, sha256: sha256, signer: signer, crypto: crypto)
    }

    /// A bundle's signature parsed, and the trusted key whose id it names.
    struct BundleSigner {
        let signature: Minisign.Signature
        let key: TrustSettings.TrustedKey
    }

    /// The signature file's text parsed and its key found among `trust`'s, or the verdict
    /// refusing it (no trusted keys, a signature that does not parse, a revoked or unknown key).
    nonisolated static func bundleSigner(_ signature: String, trust: TrustSettings) throws(BundleVerdict)
        -> BundleSigner
    {
        guard !trust.trustedKeys.isEmpty else {
            throw .refused(
                "noTrustedKeys",
                "the host trusts no key (trustedKeys in services.json): a bundle is never deployed unsigned")
        }
        let parsed: Minisign.Signature
        do { parsed = try Minisign.Signature(file: Array(signature.utf8)) } catch {
            throw .refused("badSignature", "the bundle's signature: \(error.reason)")
        }
        let keyID = parsed.keyIDText
        if trust.isRevoked(parsed.keyID) {
            throw .refused("revokedKey", "the bundle is signed by revoked key \(keyID)")
        }
        guard let key = trust.trusted(parsed.keyID) else {
            throw .refused("untrustedKey", "the bundle is signed by key \(keyID), which the host does not trust")
        }
        return BundleSigner(signature: parsed, key: key)
    }

    /// Checks the bundle's `bytes` (from `file`, named in the verdict) against `sha256` and the
    /// signature of `signer`, in memory: `host fleet publish` checks a bundle with this before it
    /// publishes it, as the hosts will, and a host checks a legacy (`Ed`) signature so.
    nonisolated static func verifyBundle(_ bytes: [UInt8], file: String, sha256: String, signer: BundleSigner)
        -> BundleVerdict
    {
        let crypto: LibCrypto
        switch LibCrypto.shared {
        case .success(let loaded): crypto = loaded
        case .failure(let error): return .refused("cryptoUnavailable", error.reason)
        }
        guard let digest = bytes.withUnsafeBytes({ crypto.sha256($0) }) else {
            return .refused("cryptoUnavailable", "EVP_Digest(SHA-256) failed")
        }
        let message: [UInt8]
        if signer.signature.prehashed {
            guard let prehash = bytes.withUnsafeBytes({ crypto.blake2b512($0) }) else {
                return .refused("cryptoUnavailable", "EVP_Digest(BLAKE2b-512) failed")
            }
            message = prehash
        } else {
            message = bytes
        }
        return verdict(digest: digest, message: message, file: file, sha256: sha256, signer: signer, crypto: crypto)
    }

    /// The bundle's SHA-256 `digest` compared with `sha256`, then the signature's trusted comment
    /// and its signature over `message` (the bundle, or its BLAKE2b-512 when prehashed) verified.
    nonisolated private static func verdict(
        digest: [UInt8], message: [UInt8], file: String, sha256: String, signer: BundleSigner, crypto: LibCrypto
    ) -> BundleVerdict {
        let parsed = signer.signature
        let keyID = parsed.keyIDText
        let actual = Hex.string(digest)
        guard actual == sha256.lowercased() else {
            return .refused("digestMismatch", "\(file) has SHA-256 \(actual), the desired state says \(sha256)")
        }
        let global = (parsed.signature + parsed.trustedComment).withUnsafeBytes {
            crypto.verifyEd25519(publicKey: signer.key.key, signature: parsed.globalSignature, message: $0)
        }
        guard global else {
            return .refused("signatureMismatch", "the signature's trusted comment does not verify with key \(keyID)")
        }
        let verified = message.withUnsafeBytes {
            crypto.verifyEd25519(publicKey: signer.key.key, signature: parsed.signature, message: $0)
        }
        guard verified else {
            return .refused("signatureMismatch", "\(file)'s signature by key \(keyID) does not verify")
        }
        return BundleVerdict(
            verified: true, reason: nil, detail: nil, keyID: keyID, trustedComment: parsed.trustedCommentText)
    }

    /// The piece of a bundle read at a time when it is streamed: under the allocator's mmap
    /// threshold (128 KiB), so the buffer is reused from its arena rather than mapped and
    /// faulted in anew at every check.
    nonisolated static let streamPiece = 64 << 10

    /// Hands the first `size` bytes of `file` to `give`, a piece at a time; how many there were
    /// (fewer: the file shrank).
    nonisolated static func stream(
        _ file: ReadOnlyFile, size: Int, to give: (UnsafeRawBufferPointer) -> Void
    ) throws(SystemError) -> Int {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: streamPiece, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < size {
            let count = try retryingOnInterrupt("read", file.path) {
                pread(file.descriptor.rawValue, buffer.baseAddress, min(streamPiece, size - offset), off_t(offset))
            }
            if count == 0 { break }
            give(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += count
        }
        return offset
    }
}

extension Host {
    /// `deploy` `digests`: the SHA-256 of each running service's plugin file, by service id, for
    /// a fleet's reported state. Hashed once per file identity (``TrustCache``, as pins are); a
    /// file that cannot be read, or a host without libcrypto, leaves its service out.
    ///
    /// Streamed in ``streamPiece``s: a plugin of tens of megabytes (debug information) is never
    /// held whole, and the digest is kept only when the file's identity is the same after the
    /// read as at its open (a file rewritten meanwhile is hashed again at the next report).
    public func serviceDigests() -> [String: String] {
        guard case .success(let crypto) = LibCrypto.shared else { return [:] }
        var digests: [String: String] = [:]
        for service in services {
            guard let file = try? ReadOnlyFile(pluginPath: service.path) else { continue }
            let identity = FileIdentity(file.status)
            if let known = PluginTrust.cache.sha256(identity) {
                digests[service.id] = known
                continue
            }
            var read = 0
            let digest = crypto.sha256 { give in
                guard let count = try? Self.stream(file, size: file.size, to: give) else { return false }
                read = count
                return true
            }
            guard let digest, read == file.size, file.currentIdentity == identity else { continue }
            PluginTrust.cache.setSHA256(identity, digest: digest, path: service.path)
            digests[service.id] = Hex.string(digest)
        }
        PluginTrust.cache.save()
        return digests
    }
}

/// A main-thread value (a closure capturing the control handler's reply) carried through a
/// job on another thread and back, untouched there.
struct MainThreadOnly<Value>: @unchecked Sendable {
    // @unchecked: made on the main thread and read only there (MainActor.assumeIsolated after
    // DispatchQueue.main.async); the thread in between only holds it.
    let value: Value

    init(_ value: Value) { self.value = value }
}
