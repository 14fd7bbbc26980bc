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
/// Cached per stored copy: a verdict is kept in memory and beside the copy in the shared store
/// (`KEY/.sha256`, `KEY/.minisig-verified`), keyed like the copy by the file's identity, so a
/// start of files checked before reads two small files and runs no cryptography.
enum PluginTrust {
    /// A signature that verified.
    struct Signer: Sendable, Equatable {
        /// The key id, as minisign prints it.
        let keyID: String
        /// The trusted key's `name` in the configuration, if any.
        let name: String?
        /// The signature's trusted comment.
        let trustedComment: String
        /// Whether the signature is over the file's BLAKE2b-512 (`ED`).
        let prehashed: Bool
    }

    /// Whether `configuration` checks anything at all: without pins or signatures, the
    /// planner skips this step (nothing changes for hosts that do not ask).
    static func isActive(_ configuration: HostConfiguration) -> Bool {
        configuration.trust.signatures != .off || configuration.services.values.contains { $0.sha256 != nil }
    }

    /// Moves the plugins of `inspection` the configuration refuses to its failures.
    static func apply(_ configuration: HostConfiguration, to inspection: inout PluginLoader.Inspection) {
        guard isActive(configuration) else { return }
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

    /// The signature of `path` parsed, nil when there is none, or why it cannot be read.
    static func readSignature(_ path: String) throws(LoadFailure.Reason) -> (
        bytes: [UInt8], signature: Minisign.Signature
    )? {
        let signaturePath = signaturePath(path)
        let bytes: [UInt8]
        do {
            let file = try ReadOnlyFile(pluginPath: signaturePath)
            guard file.status.st_mode & S_IFMT == S_IFREG else {
                throw LoadFailure.Reason.signature(.malformed("\(signaturePath) is not a regular file"))
            }
            bytes = try file.read(at: 0, count: min(file.size, Minisign.maxFileSize) + 1)
        } catch let error as SystemError {
            if error.errno == ENOENT { return nil }
            throw .signature(.malformed("\(signaturePath): \(error.operation) failed: \(error.reason)"))
        } catch let error as LoadFailure.Reason {
            throw error
        } catch {
            throw .signature(.malformed("\(signaturePath): \(error)"))
        }
        do { return (bytes, try Minisign.Signature(file: bytes)) } catch {
            throw .signature(.malformed("\(signaturePath): \(error.reason)"))
        }
    }

    private static func checkSignature(
        _ plugin: PluginInspector.Inspected, _ trust: TrustSettings, contents: inout FileContents?
    ) throws(LoadFailure.Reason) -> Signer? {
        guard trust.signatures != .off else { return nil }
        guard let (bytes, signature) = try readSignature(plugin.path) else {
            if trust.signatures == .required { throw .signature(.missing(signaturePath(plugin.path))) }
            return nil
        }
        let keyID = signature.keyIDText
        if trust.isRevoked(signature.keyID) { throw .signature(.revoked(keyID: keyID)) }
        guard let key = trust.trusted(signature.keyID) else { throw .signature(.untrusted(keyID: keyID)) }
        let signer = Signer(
            keyID: keyID, name: key.name, trustedComment: signature.trustedCommentText,
            prehashed: signature.prehashed)
        // The verdict of the same file, signature and key is kept: nothing to verify again.
        let verdict = key.key + bytes
        if cache.verified(plugin.identity) == verdict { return signer }
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
        cache.setVerified(plugin.identity, verdict, path: plugin.path)
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
        let hex = hex(digest)
        cache.setSHA256(plugin.identity, hex, path: plugin.path)
        return hex
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.string(bytes) }

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

/// Verdicts of ``PluginTrust`` by file identity: in memory for this process, and beside the
/// stored copy of the same identity in the shared store (``CopyStore``), for later starts.
final class TrustCache: Sendable {
    private struct Entry {
        var sha256: String?
        var verified: [UInt8]?
    }

    // The lock guards the table; the files are written whole by rename.
    private let memory = Locked<[FileIdentity: Entry]>([:])
    /// The shared store of copies when it is safe (chosen as ``CopyStore`` chooses it), or nil:
    /// verdicts are then kept in memory only.
    private let root: String? = CopyStore.sharedRootIfSafe()

    static let sha256Name = ".sha256"
    static let verifiedName = ".minisig-verified"

    func sha256(_ identity: FileIdentity) -> String? {
        if let known = memory.withLock({ $0[identity]?.sha256 }) { return known }
        guard let bytes = read(identity, Self.sha256Name, limit: 64), bytes.count == 64 else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        memory.withLock { $0[identity, default: Entry()].sha256 = text }
        return text
    }

    func verified(_ identity: FileIdentity) -> [UInt8]? {
        if let known = memory.withLock({ $0[identity]?.verified }) { return known }
        guard let bytes = read(identity, Self.verifiedName, limit: 32 + Minisign.maxFileSize + 1) else { return nil }
        memory.withLock { $0[identity, default: Entry()].verified = bytes }
        return bytes
    }

    func setSHA256(_ identity: FileIdentity, _ hex: String, path: String) {
        memory.withLock { $0[identity, default: Entry()].sha256 = hex }
        write(identity, Self.sha256Name, Array(hex.utf8), path: path)
    }

    func setVerified(_ identity: FileIdentity, _ verdict: [UInt8], path: String) {
        memory.withLock { $0[identity, default: Entry()].verified = verdict }
        write(identity, Self.verifiedName, verdict, path: path)
    }

    private func read(_ identity: FileIdentity, _ name: String, limit: Int) -> [UInt8]? {
        guard let root, let directory = try? DirectoryHandle.open(root + "/" + CopyStore.key(identity)) else {
            return nil
        }
        return (try? directory.read(name, limit: limit)) ?? nil
    }

    /// Best effort: a verdict not written is computed again next time.
    private func write(_ identity: FileIdentity, _ name: String, _ bytes: [UInt8], path: String) {
        guard let root else { return }
        let folder = root + "/" + CopyStore.key(identity)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { return }
        guard let directory = try? DirectoryHandle.open(folder) else { return }
        // The folder names its source, as a copy's does, so eviction removes it with the version.
        if (try? directory.contains(CopyStore.sourceName)) != true {
            let source = Array(StoredCopy.absolute(path).utf8)
            _ = source.withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try directory.replace(CopyStore.sourceName, with: bytes) }
            }
        }
        _ = bytes.withUnsafeBytes { bytes in
            Result { () throws(SystemError) in try directory.replace(name, with: bytes) }
        }
    }
}
