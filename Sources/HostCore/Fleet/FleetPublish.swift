import Glibc
import MQTTCodec
import ServiceJSON

/// `host fleet publish BUNDLE [--sign SECRET_KEY]` (issue 41): packs a folder of plugin files
/// (their `.minisig`s and an optional `services.json`) into the ustar archive the bridge reads
/// (``BundleArchive``, the same bytes for the same files), signs it with the real `minisign`
/// (the host holds no cipher of its own: signing is minisign's, checking libcrypto's) or takes a
/// `.tar` signed elsewhere with its `.minisig` beside it, and publishes it retained on
/// `servicehost/bundles/<sha256>` (in pieces `…/<sha256>/0…N-1` when over `--chunk`), then its
/// manifest (the desired state a rollout sets) on `servicehost/manifests/<sha256>`. Prints the
/// digest.
///
/// Before anything is published, the signature is checked as the hosts will check it
/// (``Host/verifyBundle(_:file:sha256:signer:)``: libcrypto, no cipher of our own) with `--key`'s
/// public key or `--config`'s `trustedKeys` and `revokedKeys`: a `.tar` signed elsewhere needs
/// one of them, a bundle signed here is checked when one is given.
enum FleetPublish {
    /// The largest piece by default: half the bridge's default `maxPacket` (1 MiB).
    static let defaultChunk = 512 << 10
    static let bundlesPrefix = "servicehost/bundles/"
    static let manifestsPrefix = "servicehost/manifests/"

    static func run(
        _ invocation: FleetCommand.Invocation, connection: FleetCommand.Connection, clock: FleetClock,
        print: (String) -> Void, note: (String) -> Void
    ) throws(FleetError) -> FleetCommand.ExitStatus {
        let path = invocation.operands[0]
        let options = invocation.options
        let trust = try trust(options)
        var info = stat()
        if trust == nil, options.sign == nil, stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            throw FleetError(
                "\(path).minisig: not checked: give --key PUBLIC_KEY or --config FILE (the hosts' trusted keys), so a signature the hosts would refuse is not published"
            )
        }
        let (bundle, signature) = try pack(path, sign: options.sign, password: try password(options))
        let digest = try sha256(bundle)
        if let trust {
            let file = options.sign == nil ? path + ".minisig" : "the signature made with \(options.sign ?? "")"
            try check(bundle, name: path, signature: signature, file: file, digest: digest, trust: trust)
        }
        let broker = try FleetConnection(connection, clock: clock)
        var chunk = invocation.options.chunk
        // The broker's own limit, with room for the topic and the header.
        if let limit = broker.brokerMaxPacket { chunk = min(chunk, max(1024, limit - 1024)) }
        let chunks = max(1, (bundle.count + chunk - 1) / chunk)
        let source = bundlesPrefix + digest
        if chunks == 1 {
            try broker.publish(source, bundle, retain: true)
        } else {
            try broker.publish(
                (0..<chunks).map { index in
                    ("\(source)/\(index)", Array(bundle[(index * chunk)..<min(bundle.count, (index + 1) * chunk)]))
                }, retain: true)
        }
        let manifest: JSONValue = .object([
            "digest": .string(digest), "size": .number(Double(bundle.count)), "signature": .string(signature),
            "chunks": .number(Double(chunks)),
        ])
        try broker.publish(manifestsPrefix + digest, Array(manifest.serialized.utf8), retain: true)
        note("published \(path): \(bundle.count) bytes in \(chunks) piece\(chunks == 1 ? "" : "s") on \(source)")
        print(digest)
        return .done
    }

    /// The keys `--key` (a public key file, or its base64 line) or `--config` (a services.json's
    /// `trustedKeys` and `revokedKeys`) give, nil when neither is given.
    static func trust(_ options: FleetCommand.Options) throws(FleetError) -> TrustSettings? {
        if let config = options.config {
            let configuration: HostConfiguration
            do { configuration = try HostConfiguration.load(path: config) } catch {
                throw FleetError("--config \(config): \(error)")
            }
            guard !configuration.trust.trustedKeys.isEmpty else {
                throw FleetError("--config \(config) trusts no key (trustedKeys): its hosts take no bundle")
            }
            return configuration.trust
        }
        guard let key = options.key else { return nil }
        // A file, or the key's line itself (`RW…`, as `minisign -P` takes it).
        let file = access(key, F_OK) == 0 || !key.hasPrefix("RW") ? try read(key, limit: Minisign.maxFileSize + 1) : nil
        let parsed: Minisign.PublicKey
        do throws(Minisign.FormatError) {
            if let file {
                parsed = try Minisign.PublicKey(file: file)
            } else {
                parsed = try Minisign.PublicKey(base64: key)
            }
        } catch {
            throw FleetError("--key \(key): \(error.reason)")
        }
        var trust = TrustSettings()
        trust.trustedKeys = [.init(name: nil, keyID: parsed.keyID, key: parsed.key)]
        return trust
    }

    /// `--key-password-file`'s password, nil when not given.
    static func password(_ options: FleetCommand.Options) throws(FleetError) -> [UInt8]? {
        try options.keyPasswordFile.map { path throws(FleetError) in
            try FleetCommand.password(path, option: "--key-password-file")
        }
    }

    /// Checks `signature` over `bundle` with `trust` as a host does; refuses naming `file` and
    /// the reason.
    static func check(
        _ bundle: [UInt8], name: String, signature: String, file: String, digest: String, trust: TrustSettings
    ) throws(FleetError) {
        let verdict: Host.BundleVerdict
        do throws(Host.BundleVerdict) {
            let signer = try Host.bundleSigner(signature, trust: trust)
            verdict = Host.verifyBundle(bundle, file: name, sha256: digest, signer: signer)
        } catch {
            verdict = error
        }
        guard verdict.verified else {
            throw FleetError(
                "\(file): refused, the hosts would not take it (\(verdict.reason ?? "")): \(verdict.detail ?? "")")
        }
    }

    /// The bundle's bytes and its minisign signature file's text.
    static func pack(_ path: String, sign key: String?, password: [UInt8]? = nil) throws(FleetError) -> (
        [UInt8], String
    ) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw FleetError("\(path): \(String(cString: strerror(errno)))") }
        let bundle: [UInt8]
        if info.st_mode & S_IFMT == S_IFDIR {
            guard key != nil else {
                throw FleetError(
                    "\(path): a folder is packed here, so it needs --sign SECRET_KEY (or publish a .tar signed elsewhere, its .minisig beside it)"
                )
            }
            bundle = BundleArchive.pack(try files(in: path))
        } else {
            bundle = try read(path, limit: FleetPublish.maxBundle)
        }
        // What the hosts will read: the same reader, the same limits.
        do throws(BundleArchiveError) { _ = try BundleArchive(bundle) } catch {
            throw FleetError("\(path): not a bundle the hosts take (\(error.reason.rawValue)): \(error.detail)")
        }
        guard let key else {
            let signature = try read(path + ".minisig", limit: 16384)
            do throws(Minisign.FormatError) { _ = try Minisign.Signature(file: signature) } catch {
                throw FleetError("\(path).minisig: \(error.reason)")
            }
            return (bundle, String(decoding: signature, as: UTF8.self))
        }
        return (bundle, try self.sign(bundle, with: key, password: password))
    }

    static let maxBundle = BundleArchive.maxBytes + (1 << 20)

    /// The folder's files, by name: regular files only, each `.minisig` beside its file.
    static func files(in folder: String) throws(FleetError) -> [(name: String, bytes: [UInt8])] {
        guard let directory = opendir(folder) else {
            throw FleetError("\(folder): \(String(cString: strerror(errno)))")
        }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(directory)
        names.sort()
        guard !names.isEmpty else { throw FleetError("\(folder): an empty folder is no bundle") }
        var files: [(name: String, bytes: [UInt8])] = []
        for name in names {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { throw FleetError("\(path): \(String(cString: strerror(errno)))") }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw FleetError("\(path) is not a regular file: a bundle holds plugin files side by side")
            }
            guard !name.hasPrefix("."), name.utf8.count <= 100 else {
                throw FleetError("\(path): a bundle's file names are plain, not hidden, at most 100 bytes")
            }
            if name.hasSuffix(".minisig") {
                let signed = String(name.dropLast(".minisig".count))
                guard names.contains(signed) else {
                    throw FleetError("\(path) signs \(signed), which is not in the folder")
                }
                let signature = try read(path, limit: 16384)
                do throws(Minisign.FormatError) { _ = try Minisign.Signature(file: signature) } catch {
                    throw FleetError("\(path): \(error.reason)")
                }
            }
            files.append((name, try read(path, limit: maxBundle)))
        }
        return files
    }

    /// Signs `bundle` with `minisign -S` and the secret key `key`; the signature file's text.
    /// A key with a password gets `password` on minisign's standard input; without one,
    /// minisign asks on the terminal when there is one (a key without a password, `minisign -G
    /// -W`, is asked nothing).
    static func sign(_ bundle: [UInt8], with key: String, password: [UInt8]? = nil) throws(FleetError) -> String {
        guard access(key, R_OK) == 0 else { throw FleetError("--sign \(key): \(String(cString: strerror(errno)))") }
        var template = Array("\(temporaryBase())/servicehost-publish.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw FleetError("cannot make a folder under \(temporaryBase()): \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        let file = folder + "/bundle.tar"
        defer {
            unlink(file)
            unlink(file + ".minisig")
            rmdir(folder)
        }
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FleetError("\(file): \(String(cString: strerror(errno)))") }
        let written = bundle.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bundle.count else { throw FleetError("\(file): \(String(cString: strerror(errno)))") }
        let input: ChildCommand.Input =
            password.map { .bytes($0 + [10]) }
            ?? (isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1 ? .terminal : .none)
        let result: ChildCommand.Result
        do {
            result = try ChildCommand.run(
                "minisign", ["-S", "-s", key, "-m", file, "-x", file + ".minisig"], mergingErrors: true, input: input)
        } catch {
            throw FleetError("--sign: cannot run minisign (install it: apt-get install minisign): \(error)")
        }
        guard result.status == 0 else {
            let said = result.output.trimmingCharacters()
            // minisign read no password: standard input was /dev/null.
            let hint =
                said.contains("get_password") && password == nil
                ? " (the key has a password: run on a terminal, or give --key-password-file FILE)" : ""
            throw FleetError("--sign \(key): minisign exited with status \(result.status): \(said)\(hint)")
        }
        return String(decoding: try read(file + ".minisig", limit: 16384), as: UTF8.self)
    }

    static func read(_ path: String, limit: Int) throws(FleetError) -> [UInt8] {
        do { return try InputFile.read(path, limit: limit) } catch { throw FleetError("\(error)") }
    }

    /// The bundle's SHA-256, in 64 lowercase hex digits, by libcrypto.
    static func sha256(_ bytes: [UInt8]) throws(FleetError) -> String {
        switch LibCrypto.shared {
        case .failure(let error): throw FleetError("cannot hash the bundle: \(error.reason)")
        case .success(let crypto):
            guard let digest = bytes.withUnsafeBytes({ crypto.sha256($0) }) else {
                throw FleetError("cannot hash the bundle: EVP_Digest(SHA-256) failed")
            }
            return Hex.string(digest)
        }
    }

    static func temporaryBase() -> String {
        getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }
}

extension String {
    /// Without leading and trailing white space and newlines.
    func trimmingCharacters() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
