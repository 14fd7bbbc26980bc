import ServiceABI
import ServiceJSON

/// A push notification payload: an APNs-shaped JSON object, parsed once, straight into the
/// tape services read, its text kept byte for byte.
public struct PushPayload: Sendable {
    /// The parsed payload, with its text exactly as given.
    public let tape: JSONTape
    /// `aps.content-available` is 1: a background fetch.
    public let isContentAvailable: Bool

    /// Its JSON text, as services receive it (a copy).
    public var text: [UInt8] { tape.bytes }

    /// Validates an already parsed payload (the object form of a control request): services
    /// receive its serialization (keys sorted, compact).
    public init(_ value: JSONValue) throws(InputError) {
        try self.init(parsing: Array(value.serialized.utf8))
    }

    /// Parses and validates payload text (a file, stdin, a control request's text form);
    /// services receive these bytes.
    public init(parsing bytes: [UInt8]) throws(InputError) {
        do { tape = try JSONTape(parsing: bytes) } catch {
            throw InputError("the push payload is not valid JSON: \(error)")
        }
        guard tape[0].type == SH_JSON_OBJECT.rawValue else {
            throw InputError("the push payload must be a JSON object")
        }
        var contentAvailable = false
        if let aps = tape.member("aps") {
            guard tape[aps].type == SH_JSON_OBJECT.rawValue else {
                throw InputError("the push payload's \"aps\" must be an object")
            }
            if let flag = tape.member("content-available", of: aps) {
                let node = tape[flag]
                guard node.type == SH_JSON_NUMBER.rawValue, node.number == 0 || node.number == 1 else {
                    throw InputError("aps.content-available must be 0 or 1")
                }
                contentAvailable = node.number == 1
            }
        }
        isContentAvailable = contentAvailable
    }
}

/// A URL as services receive it, with its scheme and host split out and lowercased.
public struct OpenURLInput: Sendable, Equatable {
    /// The URL as given.
    public let url: String
    /// Its scheme, lowercased.
    public let scheme: String
    /// Its host, lowercased; empty when it has none.
    public let host: String

    /// The longest URL the host takes, in bytes (README, Limits).
    public static let maxLength = 8192

    /// Parses `text` as an absolute URL (RFC 3986 scheme, then anything without spaces).
    public init(_ text: String) throws(InputError) {
        guard text.utf8.count <= Self.maxLength else {
            throw InputError(
                "invalid URL \"\(text.prefix(40))…\": it is \(text.utf8.count) bytes, over the limit of \(Self.maxLength)"
            )
        }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw InputError("invalid URL \"\(text)\": it has no scheme (expected scheme:…, like myapp://item/42)")
        }
        let scheme = text[..<colon]
        let isSchemeCharacter = { (c: Character) in
            c.isASCII && (c.isLetter || c.isNumber || c == "+" || c == "-" || c == ".")
        }
        guard scheme.first!.isASCII && scheme.first!.isLetter, scheme.allSatisfy(isSchemeCharacter) else {
            throw InputError("invalid URL \"\(text)\": \"\(scheme)\" is not a URL scheme")
        }
        if let bad = text.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            throw InputError(
                "invalid URL \"\(text)\": it contains \(bad.value == 0x20 ? "a space" : "a control character")")
        }
        var host = ""
        let rest = text[text.index(after: colon)...]
        if rest.hasPrefix("//") {
            let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
            host = String(
                hostAndPort.hasPrefix("[")
                    ? hostAndPort.prefix { $0 != "]" } + "]"
                    : hostAndPort.prefix { $0 != ":" })
        }
        self.url = text
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
    }

    /// Whether a service's URL claim (`scheme` or `scheme://host`) covers this URL, and how
    /// specifically: 2 for scheme and host, 1 for the scheme alone, 0 for no match.
    func match(_ claim: String) -> Int {
        if claim == scheme { return 1 }
        if claim == scheme + "://" + host, !host.isEmpty { return 2 }
        return 0
    }
}

/// A user activity (NSUserActivity) as services receive it.
public struct UserActivityInput: Sendable {
    /// Its type, e.g. "com.example.view-item".
    public let type: String
    /// Its web page URL.
    public let webpageURL: OpenURLInput?
    /// Its userInfo object.
    public let userInfo: JSONValue?

    /// The longest activity type, in bytes (README, Limits).
    public static let maxTypeLength = 255

    /// Validates an activity.
    public init(type: String, webpageURL: String? = nil, userInfo: JSONValue? = nil) throws(InputError) {
        guard !type.isEmpty else { throw InputError("an activity needs a type") }
        guard type.utf8.count <= Self.maxTypeLength else {
            throw InputError("an activity type is \(type.utf8.count) bytes, over the limit of \(Self.maxTypeLength)")
        }
        if let userInfo, userInfo.objectValue == nil {
            throw InputError("an activity's userInfo must be a JSON object")
        }
        self.type = type
        self.webpageURL = try webpageURL.map { (text) throws(InputError) in try OpenURLInput(text) }
        self.userInfo = userInfo
    }

    /// How a service's activity claims cover this activity: nil without claims, 1 when one
    /// names its type, 0 when none does.
    func match(_ claims: [String]) -> Int? {
        claims.isEmpty ? nil : (claims.contains(type) ? 1 : 0)
    }
}

/// A device token from its hex text.
public struct DeviceToken: Sendable, Equatable {
    /// The token's bytes.
    public let bytes: [UInt8]
    /// Lowercase hex.
    public var hex: String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    /// The longest token, in bytes (README, Limits): APNs tokens are 32 bytes today, and Apple
    /// warns they may grow; the host keeps the token and answers it in every `state`.
    public static let maxBytes = 256

    /// Parses hex text: an even number of hex digits, at least one byte, at most ``maxBytes``.
    public init(hex text: String) throws(InputError) {
        guard text.utf8.count <= 2 * Self.maxBytes else {
            throw InputError(
                "invalid token: \(text.utf8.count) hex digits, over the limit of \(Self.maxBytes) bytes (\(2 * Self.maxBytes) digits)"
            )
        }
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else {
            throw InputError("invalid token \"\(text)\": expected an even number of hex digits")
        }
        var bytes: [UInt8] = []
        for pair in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.nibble(digits[pair]), let low = Self.nibble(digits[pair + 1]) else {
                throw InputError("invalid token \"\(text)\": not hex")
            }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }
}

/// What the app was launched with (UIKit's launch options), from the command line.
public struct LaunchRequest: Sendable {
    /// `--launch-notification FILE`.
    public var notification: PushPayload?
    /// `--launch-url URL`.
    public var url: OpenURLInput?
    /// `--launch-activity TYPE[,URL]`.
    public var activity: UserActivityInput?
    /// `--launch-shortcut ID`: the quick action that launched the app.
    public var shortcut: String?
    /// `--launch-scene NAME[:ROLE]`: the scene that connects at launch, with `url` and
    /// `activity` in its connection options.
    public var scene: SceneRequest?
    /// `--launch-state background|active`: where the launch leaves the app; nil lets the
    /// launch options decide (``target``).
    public var state: AppState?

    /// No launch options.
    public init(
        notification: PushPayload? = nil, url: OpenURLInput? = nil, activity: UserActivityInput? = nil,
        scene: SceneRequest? = nil, state: AppState? = nil
    ) {
        self.notification = notification
        self.url = url
        self.activity = activity
        self.scene = scene
        self.state = state
    }

    /// Whether the app was woken by a background push (`content-available: 1`), as iOS
    /// launches an app into the background for one, rather than by a tap that opened it.
    public var isBackgroundPush: Bool { notification?.isContentAvailable == true && target == .background }

    /// Where the launch leaves the app: `state` when given; else the background for a
    /// background push without a launch scene (iOS launches such an app into the
    /// background), and active otherwise.
    public var target: AppState {
        if let state { return state }
        return notification?.isContentAvailable == true && scene == nil ? .background : .active
    }

    /// Refuses launch options that contradict each other: a launch scene or a tapped
    /// notification opens the app, so neither launches it into the background.
    public func validate() throws(InputError) {
        guard state == .background else { return }
        if let scene {
            throw InputError(
                "--launch-state background: the launch scene \(scene.name) brings the app to the foreground")
        }
        if let notification, !notification.isContentAvailable {
            throw InputError(
                "--launch-state background: a notification without content-available: 1 launches the app"
                    + " because the user tapped it, which brings it to the foreground")
        }
    }
}

/// Input the host refuses: the message names the thing and the reason.
public struct InputError: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public let message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
