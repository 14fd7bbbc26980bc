/// What the configuration says about who may have built the plugins loaded (issue 40): the
/// top-level keys `signatures`, `trustedKeys` and `revokedKeys` of ``HostConfiguration``.
///
/// ```json
/// {
///   "signatures": "required",
///   "trustedKeys": [{ "name": "release", "key": "RWQ…" }, { "file": "keys/ci.pub" }],
///   "revokedKeys": ["9A3B5C7D1E2F4A6B"],
///   "services": { "com.example.x": { "sha256": "4f2a…" } }
/// }
/// ```
public struct TrustSettings: Sendable, Equatable {
    /// `signatures`: whether a plugin `libX.so` must come with `libX.so.minisig`.
    public enum Policy: String, Sendable, CaseIterable {
        /// Every plugin file must be signed by a trusted key.
        case required
        /// An unsigned file loads; a file with a signature loads only when it verifies.
        case optional
        /// Signatures are not looked at. The default.
        case off
    }

    /// A minisign public key the host trusts, with the name the configuration gives it.
    public struct TrustedKey: Sendable, Equatable {
        /// `name`, or nil.
        public var name: String?
        /// The key's 8-byte id.
        public var keyID: [UInt8]
        /// The Ed25519 key (32 bytes).
        public var key: [UInt8]

        /// The key id as minisign prints it (16 uppercase hex digits).
        public var keyIDText: String { Minisign.keyIDText(keyID) }
    }

    /// `signatures`. Default ``Policy/off``.
    public var signatures: Policy = .off
    /// `trustedKeys`, in the file's order.
    public var trustedKeys: [TrustedKey] = []
    /// `revokedKeys`: key ids (16 hex digits, as minisign prints them) no signature may come
    /// from, even when a trusted key has the id.
    public var revokedKeyIDs: Set<String> = []

    /// Settings that check nothing.
    public init() {}

    /// The trusted key with `keyID`, or nil.
    func trusted(_ keyID: [UInt8]) -> TrustedKey? { trustedKeys.first { $0.keyID == keyID } }

    /// Whether `keyID` is revoked.
    func isRevoked(_ keyID: [UInt8]) -> Bool {
        // Asked for every signed plugin at every start: no text made when nothing is revoked.
        !revokedKeyIDs.isEmpty && revokedKeyIDs.contains(Minisign.keyIDText(keyID))
    }
}
