import Foundation

/// The real `minisign` (Debian's package) for the signature tests (issue 40): keys made with
/// `minisign -G -W` (no password) in a test's scratch folder, files signed as authors sign them.
/// ``installed`` installs the package with apt-get when it is missing and the machine allows it.
public enum Minisign {
    /// The executable, or nil (with the reason printed once) when it cannot be had.
    public static let installed: String? =
        SystemPackages.ensure(["minisign"], providing: ["/usr/bin/minisign"], for: "the signature tests")
        ? "/usr/bin/minisign" : nil

    /// A key pair made by `minisign -G -W` in `folder`: `NAME.pub` and `NAME.key`.
    public struct KeyPair {
        public let publicKeyFile: String
        public let secretKeyFile: String

        /// The base64 line of the public key (what `trustedKeys` takes inline).
        public var publicKey: String {
            get throws {
                let text = try String(contentsOfFile: publicKeyFile, encoding: .utf8)
                return String(text.split(separator: "\n")[1])
            }
        }

        /// The key id as minisign prints it (16 hex digits), from the public key file's comment.
        public var keyID: String {
            get throws {
                let text = try String(contentsOfFile: publicKeyFile, encoding: .utf8)
                // minisign prints the id without leading zeros (`%llX`); the host shows all 16 digits.
                let printed = String(text.split(separator: "\n")[0].split(separator: " ").last ?? "")
                return String(repeating: "0", count: max(0, 16 - printed.count)) + printed
            }
        }
    }

    /// Makes a key pair `name` in `folder`.
    public static func generate(_ name: String, in folder: String) throws -> KeyPair {
        guard let tool = installed else { throw TestFailure("minisign is not installed") }
        let pair = KeyPair(publicKeyFile: folder + "/\(name).pub", secretKeyFile: folder + "/\(name).key")
        let result = try Command.run(
            tool, ["-G", "-W", "-f", "-p", pair.publicKeyFile, "-s", pair.secretKeyFile])
        guard result.status == 0 else { throw TestFailure("minisign -G failed: \(result.stderr)") }
        return pair
    }

    /// Signs `file` with `key` into `file.minisig` (prehashed, minisign's default; `legacy`:
    /// `-l`, over the file itself), with `comment` as the trusted comment when given.
    public static func sign(_ file: String, with key: KeyPair, legacy: Bool = false, comment: String? = nil) throws {
        guard let tool = installed else { throw TestFailure("minisign is not installed") }
        let result = try Command.run(
            tool,
            ["-S", "-s", key.secretKeyFile, "-m", file] + (legacy ? ["-l"] : []) + (comment.map { ["-t", $0] } ?? []))
        guard result.status == 0 else { throw TestFailure("minisign -S failed: \(result.stderr)") }
    }
}
