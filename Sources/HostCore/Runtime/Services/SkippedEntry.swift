import ServiceJSON

/// A file or service the host looked at and did not start, with why: what `host ctl list
/// --all` adds to the running services (GStreamer's blacklist, OBS's module list).
public struct SkippedEntry: Sendable, Equatable {
    /// Why, as a stable word for tools.
    public enum Reason: String, Sendable, CaseIterable {
        /// Writable by others or owned by another user (ssh's rule).
        case insecure
        /// Not a ServiceHost plugin: not ELF, not a shared library, no entry, no metadata, not a file.
        case notPlugin = "not-a-plugin"
        /// A truncated ELF file, malformed metadata, or a file that could not be read.
        case corrupt
        /// The plugin and the host share no ABI version.
        case incompatible
        /// Another file already provides the service id.
        case duplicateID = "duplicate-id"
        /// `dlopen`, `servicehost_entry`, `attach` or its worker failed.
        case failed
        /// `"enabled": false` in the configuration.
        case disabled
        /// Not listed, under `--only-configured`.
        case notConfigured = "not-configured"
        /// A service it requires did not start.
        case requirementFailed = "requirement-failed"
        /// It answers a request name an earlier service in the start order answers already.
        case answerConflict = "answer-conflict"
        /// Untrusted, under `--safe-mode`.
        case safeMode = "safe-mode"
        /// Marked failed after a crash loop, until its file changes.
        case crashLooped = "crash-looped"
        /// A changed file not loaded again: its retired copies reached the limit (the running
        /// copy is kept).
        case replacementLimit = "replacement-limit"
        /// Its SHA-256 is not the one the configuration pins.
        case digestMismatch = "digest-mismatch"
        /// Signatures are required and it has none.
        case signatureMissing = "signature-missing"
        /// Its signature file is unreadable or not minisign's format.
        case signatureMalformed = "signature-malformed"
        /// Signed by a key not in `trustedKeys`.
        case signatureUntrusted = "signature-untrusted"
        /// Signed by a key in `revokedKeys`.
        case signatureRevoked = "signature-revoked"
        /// Signed by a trusted key, but the signature does not verify.
        case signatureMismatch = "signature-mismatch"
        /// A pin or signature had to be checked and the system's libcrypto cannot be used.
        case cryptoUnavailable = "crypto-unavailable"
    }

    /// The file, when known.
    public var path: String?
    /// The services concerned, when known.
    public var services: [String]
    public var reason: Reason
    /// The reason in words.
    public var message: String

    init(path: String? = nil, services: [String], reason: Reason, message: String) {
        self.path = path
        self.services = services
        self.reason = reason
        self.message = message
    }

    init(service: String, reason: Reason, message: String) {
        self.init(services: [service], reason: reason, message: message)
    }

    /// A file the loader refused.
    init(_ failure: LoadFailure) {
        let reason: Reason =
            switch failure.reason {
            case .insecure: .insecure
            case .notRegularFile, .notELF, .wrongArchitecture, .notSharedObject, .noEntrySymbol, .noMetadata: .notPlugin
            case .corrupt, .invalidMetadata, .system: .corrupt
            case .abiMismatch: .incompatible
            case .duplicateServiceID: .duplicateID
            case .dlopen, .entry, .attachFailed, .worker, .changed: .failed
            case .replacementLimit: .replacementLimit
            case .digestMismatch: .digestMismatch
            case .signature(.missing): .signatureMissing
            case .signature(.malformed): .signatureMalformed
            case .signature(.untrusted): .signatureUntrusted
            case .signature(.revoked): .signatureRevoked
            case .signature(.mismatch): .signatureMismatch
            case .cryptoUnavailable: .cryptoUnavailable
            }
        var services: [String] = []
        if case .attachFailed(let id, _) = failure.reason { services = [id] }
        if case .duplicateServiceID(let id, _) = failure.reason { services = [id] }
        if case .digestMismatch(let id, _, _) = failure.reason { services = [id] }
        self.init(path: failure.path, services: services, reason: reason, message: failure.message)
    }

    /// `{"path":…,"services":[…],"reason":"insecure","message":"…"}`.
    var json: JSONValue {
        .object([
            "path": path.map(JSONValue.string) ?? .null, "services": .array(services.map(JSONValue.string)),
            "reason": .string(reason.rawValue), "message": .string(message),
        ])
    }
}
