/// Why a plugin file was not loaded, in words a user can act on.
public struct LoadFailure: Error, CustomStringConvertible, Sendable {
    /// The reasons a file can be refused, each with what it needs to explain itself.
    public enum Reason: Error, Sendable, Equatable {
        /// A directory, FIFO, socket or device named `*.so`; it is never opened.
        case notRegularFile(kind: String)
        /// File or directory permissions that would let another user swap the code.
        case insecure(String)
        /// A system call failed (open, read, stat).
        case system(SystemError)
        /// The file is empty, text or random bytes.
        case notELF(detail: String)
        /// An ELF file for another machine or word size.
        case wrongArchitecture(found: String, host: String)
        /// An ELF executable or object file rather than a shared library.
        case notSharedObject(type: String)
        /// The ELF structure is truncated or inconsistent.
        case corrupt(String)
        /// The library does not export `servicehost_entry`.
        case noEntrySymbol
        /// The library has no `servicehost_meta` section.
        case noMetadata
        /// The metadata section is malformed.
        case invalidMetadata(String)
        /// The plugin and the host share no ABI version.
        case abiMismatch(pluginMin: UInt32, pluginMax: UInt32, hostMin: UInt32, hostMax: UInt32)
        /// Another loaded file already provides this service id.
        case duplicateServiceID(id: String, otherPath: String)
        /// `dlopen` failed; the text is `dlerror()`'s.
        case dlopen(String)
        /// `servicehost_entry` ran but its answer is unusable.
        case entry(String)
        /// A service's `attach` declined to run.
        case attachFailed(id: String, result: Int32)
        /// The plugin's worker process died or hung while loading it (`--isolation process`).
        case worker(String)
        /// The file changed again, but the copies of it already retired (code cannot be unloaded)
        /// reached the limit: the running copy is kept.
        case replacementLimit(limit: Int)
        /// The file changed after it was inspected, or while it was being copied to be loaded:
        /// nothing of it was loaded (a `reload` once it is complete loads it).
        case changed
        /// The configuration pins service `service`'s file to the SHA-256 `expected`; the file's is
        /// `actual` (issue 40).
        case digestMismatch(service: String, expected: String, actual: String)
        /// The file's minisign signature is missing, unreadable, untrusted, revoked or wrong.
        case signature(SignatureProblem)
        /// A pin or a signature had to be checked, and the system's libcrypto cannot be used:
        /// the file is refused rather than loaded unchecked.
        case cryptoUnavailable(String)
    }

    /// What is wrong with a plugin file's signature (`libX.so.minisig`).
    public enum SignatureProblem: Sendable, Equatable {
        /// `"signatures": "required"` and the file has none: the path looked for.
        case missing(String)
        /// The signature file cannot be read or is not minisign's format.
        case malformed(String)
        /// Made by a key that is not in `trustedKeys`.
        case untrusted(keyID: String)
        /// Made by a key in `revokedKeys`.
        case revoked(keyID: String)
        /// Made by a trusted key, but it does not verify.
        case mismatch(keyID: String, detail: String)
    }

    /// The file that failed.
    public let path: String
    /// Why.
    public let reason: Reason

    /// A failure of `path` for `reason`.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// "PATH: REASON", one line.
    public var description: String { "\(path): \(message)" }

    /// The reason in words, without the path.
    public var message: String {
        switch reason {
        case .notRegularFile(let kind):
            "skipped: is a \(kind), not a regular file"
        case .insecure(let why):
            "refused: \(why) (fix the permissions, or pass --allow-insecure-plugins)"
        case .system(let error):
            "\(error.operation) failed: \(error.reason)"
        case .notELF(let detail):
            "not an ELF shared object (\(detail))"
        case .wrongArchitecture(let found, let host):
            "built for another architecture: the file is \(found), this host is \(host)"
        case .notSharedObject(let type):
            "not a shared library: the file is an ELF \(type) (link plugins with -shared)"
        case .corrupt(let detail):
            "corrupt or truncated ELF file: \(detail)"
        case .noEntrySymbol:
            "no servicehost_entry symbol: not a ServiceHost plugin (a C plugin defines SH_EXPORT servicehost_entry;"
                + " a Swift plugin applies the ServiceMetadata build plugin to its target)"
        case .noMetadata:
            "no servicehost_meta section: the static metadata is missing (C: SH_PLUGIN_METADATA and"
                + " SH_SERVICE_METADATA; Swift: the ServiceMetadata build plugin and a servicehost.json)"
        case .invalidMetadata(let detail):
            "invalid metadata: \(detail)"
        case .abiMismatch(let pluginMin, let pluginMax, let hostMin, let hostMax):
            if pluginMin > hostMax {
                "needs a newer host: the plugin speaks ABI \(Self.range(pluginMin, pluginMax)), this host speaks"
                    + " ABI \(Self.range(hostMin, hostMax)) (upgrade the host)"
            } else {
                "too old for this host: the plugin speaks ABI \(Self.range(pluginMin, pluginMax)), this host"
                    + " speaks ABI \(Self.range(hostMin, hostMax)) (rebuild the plugin against this host's SDK)"
            }
        case .duplicateServiceID(let id, let otherPath):
            "duplicate service id \(id): already provided by \(otherPath)"
        case .dlopen(let error):
            "dlopen failed: \(error)"
        case .entry(let detail):
            "servicehost_entry: \(detail)"
        case .attachFailed(let id, let result):
            "service \(id) declined to start: attach answered \(ResultCode.name(result)) (see its log lines)"
        case .worker(let detail):
            detail
        case .replacementLimit(let limit):
            "not replaced: \(limit) earlier copies of this file are already retired in this process (code cannot"
                + " be unloaded); the running copy is kept until the host restarts"
        case .changed:
            "not loaded: the file changed while it was being loaded (reload once it is complete)"
        case .digestMismatch(let service, let expected, let actual):
            "refused: its SHA-256 is \(actual), but the configuration pins \(service) to \(expected)"
        case .signature(.missing(let path)):
            "refused: not signed (signatures are required and \(path) does not exist; sign with minisign -S -m)"
        case .signature(.malformed(let detail)):
            "refused: unreadable signature: \(detail)"
        case .signature(.untrusted(let keyID)):
            "refused: signed by key \(keyID), which is not in trustedKeys"
        case .signature(.revoked(let keyID)):
            "refused: signed by key \(keyID), which is in revokedKeys"
        case .signature(.mismatch(let keyID, let detail)):
            "refused: bad signature by key \(keyID): \(detail)"
        case .cryptoUnavailable(let detail):
            "refused: its digest or signature cannot be checked: \(detail)"
        }
    }

    private static func range(_ low: UInt32, _ high: UInt32) -> String {
        low == high ? "version \(low)" : "versions \(low) to \(high)"
    }
}
