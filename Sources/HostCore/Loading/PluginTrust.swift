import Glibc
import Locking
import ServiceJSON

/// What the host checked of a plugin file before it was opened (issue 40): the SHA-256 its
/// configuration pins, and the minisign signature beside it.
///
/// The host's load and reload, `host check` and `host inspect --config` all check through
/// ``LoadPlanner`` (or ``check(_:configuration:)``), so the dry runs refuse exactly the files the
/// loader refuses, before any `dlopen`. The code loaded is the code checked: the loader copies a
/// file only while it keeps the identity it was checked with (``StoredCopy``).
///
/// Cached by the file's identity, as its stored copy is (``TrustCache``, one file for the store
/// read once per start): a start of files checked before runs no cryptography and reads no file
/// per plugin. A signature's verdict also holds the identity of the signature file that verified
/// and the key that verified it, so a signed plugin costs one `stat` of its `.minisig` more than
/// an unsigned one; a changed or removed signature file, a key no longer trusted (or another key
/// under its id) or revoked, and a changed plugin are all checked anew.
enum PluginTrust {
    /// A signature that verified.
    struct Signer: Sendable, Equatable {
        /// The key id's 8 bytes.
        let keyIDBytes: [UInt8]
        /// The trusted key's `name` in the configuration, if any.
        let name: String?
        /// The signature's trusted comment, as bytes.
        let trustedCommentBytes: [UInt8]
        /// Whether the signature is over the file's BLAKE2b-512 (`ED`).
        let prehashed: Bool

        // Text only when asked (`host inspect`): a start checks every plugin and shows none.
        /// The key id, as minisign prints it.
        var keyID: String { Minisign.keyIDText(keyIDBytes) }
        /// The signature's trusted comment.
        var trustedComment: String { String(decoding: trustedCommentBytes, as: UTF8.self) }
    }

    /// Whether `configuration` checks anything at all: without pins or signatures, the
    /// planner skips this step (nothing changes for hosts that do not ask).
    static func isActive(_ configuration: HostConfiguration) -> Bool {
        configuration.trust.signatures != .off || configuration.services.values.contains { $0.sha256 != nil }
    }

    /// Moves the plugins of `inspection` the configuration refuses to its failures.
    static func apply(_ configuration: HostConfiguration, to inspection: inout PluginLoader.Inspection) {
        guard isActive(configuration) else { return }
        // The verdicts found are written once for the whole set.
        defer { cache.save() }
        var kept: [PluginInspector.Inspected] = []
        kept.reserveCapacity(inspection.plugins.count)
        for plugin in inspection.plugins {
            switch check(plugin, configuration: configuration) {
            case .success: kept.append(plugin)
            case .failure(let reason): inspection.failures.append(LoadFailure(path: plugin.path, reason: reason))
            }
        }
        inspection.plugins = kept
    }

    /// Checks `plugin` against the configuration's pins of its services and its signature
    /// policy: the signer when a signature verified, nil when none was needed.
    static func check(_ plugin: PluginInspector.Inspected, configuration: HostConfiguration) -> Result<
        Signer?, LoadFailure.Reason
    > {
        do throws(LoadFailure.Reason) {
            var contents: FileContents?
            let signer = try checkSignature(plugin, configuration.trust, contents: &contents)
            for service in plugin.metadata.services {
                guard let expected = configuration.service(service.id)?.sha256 else { continue }
                let actual = try sha256(of: plugin, contents: &contents)
                if actual != expected {
                    throw .digestMismatch(service: service.id, expected: expected, actual: actual)
                }
            }
            return .success(signer)
        } catch {
            return .failure(error)
        }
    }

    // MARK: Signatures

    /// The signature file of plugin `path`: `libX.so.minisig` beside `libX.so`.
    static func signaturePath(_ path: String) -> String { path + ".minisig" }

    /// The signature of `path` parsed with the identity of the file read, nil when there is
    /// none, or why it cannot be read.
    static func readSignature(_ path: String) throws(LoadFailure.Reason) -> (
        signature: Minisign.Signature, identity: FileIdentity
    )? {
        let signaturePath = signaturePath(path)
        let bytes: [UInt8]
        let identity: FileIdentity
        do {
            let file = try ReadOnlyFile(pluginPath: signaturePath)
            guard file.status.st_mode & S_IFMT == S_IFREG else {
                throw LoadFailure.Reason.signature(.malformed("\(signaturePath) is not a regular file"))
            }
            identity = FileIdentity(file.status)
            bytes = try file.read(at: 0, count: min(file.size, Minisign.maxFileSize) + 1)
        } catch let error as SystemError {
            if error.errno == ENOENT { return nil }
            throw .signature(.malformed("\(signaturePath): \(error.operation) failed: \(error.reason)"))
        } catch let error as LoadFailure.Reason {
            throw error
        } catch {
            throw .signature(.malformed("\(signaturePath): \(error)"))
        }
        do { return (try Minisign.Signature(file: bytes), identity) } catch {
            throw .signature(.malformed("\(signaturePath): \(error.reason)"))
        }
    }

    private static func checkSignature(
        _ plugin: PluginInspector.Inspected, _ trust: TrustSettings, contents: inout FileContents?
    ) throws(LoadFailure.Reason) -> Signer? {
        guard trust.signatures != .off else { return nil }
        let path = signaturePath(plugin.path)
        // The verdict kept holds while the signature file keeps the identity whose bytes verified
        // (one `stat`: the rule the stored copy of the plugin itself is trusted by, see
        // ``StoredCopy``) and its key is still trusted, as the same key, and not revoked.
        var status = stat()
        let found = PathBytes.cString(path).withUnsafeBufferPointer { name in
            stat(name.baseAddress!, &status) == 0 ? 0 : errno
        }
        if found == ENOENT {
            if trust.signatures == .required { throw .signature(.missing(path)) }
            return nil
        }
        if found == 0, let kept = cache.signature(plugin.identity), kept.file == FileIdentity(status),
            !trust.isRevoked(kept.keyID), let key = trust.trusted(kept.keyID), key.key == kept.key
        {
            return Signer(
                keyIDBytes: kept.keyID, name: key.name, trustedCommentBytes: kept.trustedComment,
                prehashed: kept.prehashed)
        }
        // Anything else is read and checked anew, and says its own reason.
        guard let (signature, signatureIdentity) = try readSignature(plugin.path) else {
            if trust.signatures == .required { throw .signature(.missing(path)) }
            return nil
        }
        let keyID = signature.keyIDText
        if trust.isRevoked(signature.keyID) { throw .signature(.revoked(keyID: keyID)) }
        guard let key = trust.trusted(signature.keyID) else { throw .signature(.untrusted(keyID: keyID)) }
        let signer = Signer(
            keyIDBytes: signature.keyID, name: key.name, trustedCommentBytes: signature.trustedComment,
            prehashed: signature.prehashed)
        let crypto = try library()
        guard
            signature.globalSignature.count == 64,
            (signature.signature + signature.trustedComment).withUnsafeBytes({
                crypto.verifyEd25519(publicKey: key.key, signature: signature.globalSignature, message: $0)
            })
        else {
            throw .signature(.mismatch(keyID: keyID, detail: "the trusted comment's global signature does not verify"))
        }
        let file = try load(plugin, into: &contents)
        let verified: Bool
        if signature.prehashed {
            guard let prehash = file.withBytes({ crypto.blake2b512($0) }) else {
                throw .cryptoUnavailable("EVP_Digest(BLAKE2b-512) failed")
            }
            verified = prehash.withUnsafeBytes {
                crypto.verifyEd25519(publicKey: key.key, signature: signature.signature, message: $0)
            }
        } else {
            verified = file.withBytes {
                crypto.verifyEd25519(publicKey: key.key, signature: signature.signature, message: $0)
            }
        }
        guard verified else {
            throw .signature(
                .mismatch(
                    keyID: keyID, detail: "the file's signature does not verify (the file changed since it was signed?)"
                ))
        }
        cache.setSignature(
            plugin.identity,
            VerdictFile.Signature(
                file: signatureIdentity, keyID: signature.keyID, key: key.key, prehashed: signature.prehashed,
                trustedComment: signature.trustedComment), path: plugin.path)
        return signer
    }

    // MARK: Digests

    private static func sha256(of plugin: PluginInspector.Inspected, contents: inout FileContents?) throws(LoadFailure
        .Reason)
        -> String
    {
        if let known = cache.sha256(plugin.identity) { return known }
        let crypto = try library()
        let file = try load(plugin, into: &contents)
        guard let digest = file.withBytes({ crypto.sha256($0) }) else {
            throw .cryptoUnavailable("EVP_Digest(SHA-256) failed")
        }
        cache.setSHA256(plugin.identity, digest: digest, path: plugin.path)
        return Hex.string(digest)
    }

    private static func library() throws(LoadFailure.Reason) -> LibCrypto {
        switch LibCrypto.shared {
        case .success(let crypto): return crypto
        case .failure(let error): throw .cryptoUnavailable(error.reason)
        }
    }

    // MARK: The file's bytes

    /// A plugin file mapped read-only, once per check, with the identity it was inspected with.
    final class FileContents {
        private let base: UnsafeMutableRawPointer?
        private let count: Int

        init(_ plugin: PluginInspector.Inspected) throws(LoadFailure.Reason) {
            let file: ReadOnlyFile
            do { file = try ReadOnlyFile(pluginPath: plugin.path) } catch { throw .system(error) }
            // The bytes checked must be the bytes of the identity the loader copies.
            guard FileIdentity(file.status) == plugin.identity else { throw .changed }
            count = file.size
            if count == 0 {
                base = nil
                return
            }
            guard let mapped = mmap(nil, count, PROT_READ, MAP_PRIVATE, file.descriptor.rawValue, 0),
                mapped != MAP_FAILED
            else { throw .system(.current("mmap", plugin.path)) }
            base = mapped
        }

        deinit { if let base { munmap(base, count) } }

        func withBytes<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
            body(UnsafeRawBufferPointer(start: base, count: count))
        }
    }

    private static func load(_ plugin: PluginInspector.Inspected, into contents: inout FileContents?)
        throws(LoadFailure.Reason) -> FileContents
    {
        if let contents { return contents }
        let loaded = try FileContents(plugin)
        contents = loaded
        return loaded
    }

    // MARK: The cache

    static let cache = TrustCache()
}
