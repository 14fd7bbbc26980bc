import ServiceABI
import ServiceJSON

/// A URL the app is asked to open, the data of `open(_:)` (a copy of `sh_open_url`, with
/// the URL split into its parts).
///
/// ```swift
/// func open(_ url: OpenURL) -> Bool {
///     guard url.host == "item", let id = url.pathComponents.first else { return false }
///     host.log(.info, "open item \(id)")   // myapp://item/42 → "open item 42"
///     return true
/// }
/// ```
///
/// The split is simple (RFC 3986's generic syntax, no normalization): path components
/// and query items are percent-decoded, `+` stays `+`.
public struct OpenURL: Sendable, Hashable, CustomStringConvertible {
    /// The whole URL as the host received it: "myapp://item/42?ref=push".
    public var string: String
    /// Its scheme, lowercased: "myapp".
    public var scheme: String
    /// Its host, lowercased, without user info or port: "item"; "" when it has none.
    public var host: String
    /// Its path, percent-decoded: "/42"; "" when it has none.
    public var path: String
    /// The path's non-empty segments, percent-decoded: `["42"]`.
    public var pathComponents: [String]
    /// The query's `name=value` pairs in order, percent-decoded; empty without a query.
    public var queryItems: [QueryItem]
    /// The fragment after "#", percent-decoded, or `nil`.
    public var fragment: String?
    /// The URL launched the app (`SH_FROM_LAUNCH`): this is its one delivery after the
    /// app became active (it was also in the launch options).
    public var isFromLaunch: Bool
    /// The URL came with a scene's connection options (`SH_FROM_CONNECTION`): this is its
    /// one delivery after the scene became active (it was also in
    /// ``SceneConnectionOptions/urlContexts``).
    public var isFromConnection: Bool

    /// One `name=value` pair of a query (`value` is `nil` for a bare `name`).
    public struct QueryItem: Sendable, Hashable {
        /// The name, percent-decoded.
        public var name: String
        /// The value, percent-decoded, or `nil` when the item has no "=".
        public var value: String?

        /// Creates a query item.
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// Splits `string`; `nil` when it does not start with a scheme and ":".
    public init?(_ string: String, isFromLaunch: Bool = false) {
        guard let colon = string.utf8.firstIndex(of: UInt8(ascii: ":")),
            Self.isScheme(string[..<colon])
        else { return nil }
        self.init(string: string, colon: colon, isFromLaunch: isFromLaunch)
    }

    /// Copies the host's `sh_open_url` (valid only during the event).
    init(_ raw: UnsafePointer<sh_open_url>) {
        let url = raw.copyWithinDeclaredSize()
        let size = Int(url.size)
        let string = url.url.map { String(cString: $0) } ?? ""
        let colon = string.utf8.firstIndex(of: UInt8(ascii: ":")) ?? string.endIndex
        let flags = size >= MemoryLayout<sh_open_url>.offset(of: \.flags)! + 4 ? url.flags : 0
        self.init(string: string, colon: colon, isFromLaunch: flags & UInt32(SH_FROM_LAUNCH) != 0)
        isFromConnection = flags & UInt32(SH_FROM_CONNECTION) != 0
        // The host's scheme and host are authoritative (it matched claims with them).
        if size >= MemoryLayout<sh_open_url>.offset(of: \.host)! + MemoryLayout<Int>.size {
            if let scheme = url.scheme { self.scheme = String(cString: scheme) }
            if let host = url.host { self.host = String(cString: host) }
        }
    }

    private init(string: String, colon: String.Index, isFromLaunch: Bool) {
        self.string = string
        self.isFromLaunch = isFromLaunch
        isFromConnection = false
        scheme = string[..<colon].lowercased()
        var rest = colon < string.endIndex ? string[string.utf8.index(after: colon)...] : ""
        fragment = nil
        if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) {
            fragment = Self.percentDecoded(rest[rest.utf8.index(after: hash)...])
            rest = rest[..<hash]
        }
        queryItems = []
        if let question = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            queryItems = Self.queryItems(rest[rest.utf8.index(after: question)...])
            rest = rest[..<question]
        }
        host = ""
        if rest.hasPrefix("//") {
            let authority = rest.dropFirst(2)
            let end = authority.utf8.firstIndex(of: UInt8(ascii: "/")) ?? authority.endIndex
            host = Self.host(of: authority[..<end])
            rest = authority[end...]
        }
        path = Self.percentDecoded(rest)
        pathComponents = rest.split(separator: "/").map { Self.percentDecoded($0) }
    }

    /// The value of the first query item named `name`, or `nil`.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The URL as received.
    public var description: String { string }

    /// RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isAlpha(first) else { return false }
        return text.utf8.allSatisfy { byte in
            isAlpha(byte) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// The host of an authority: without "user@" and ":port", lowercased.
    private static func host(of authority: Substring) -> String {
        var host = authority
        if let at = host.utf8.lastIndex(of: UInt8(ascii: "@")) { host = host[host.utf8.index(after: at)...] }
        if host.hasPrefix("["), let close = host.utf8.firstIndex(of: UInt8(ascii: "]")) {
            host = host[...close]  // an IPv6 literal keeps its brackets
        } else if let colon = host.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = host[..<colon]
        }
        return percentDecoded(host).lowercased()
    }

    private static func queryItems(_ query: Substring) -> [QueryItem] {
        query.split(separator: "&").map { pair in
            guard let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) else {
                return QueryItem(name: percentDecoded(pair), value: nil)
            }
            return QueryItem(
                name: percentDecoded(pair[..<equals]), value: percentDecoded(pair[pair.utf8.index(after: equals)...]))
        }
    }

    /// Decodes "%XX" escapes; a "%" not followed by two hex digits stays as it is.
    static func percentDecoded(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = Hex.value(bytes[index + 1]), let low = Hex.value(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
