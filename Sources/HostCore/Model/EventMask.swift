import ServiceABI

/// The set of event kinds a service handles: the ABI's two-word mask.
public struct EventMask: Equatable, Sendable {
    /// The mask words as in `sh_meta_service.events`.
    public var words: (UInt64, UInt64)

    /// A mask from the metadata's two words.
    public init(_ word0: UInt64, _ word1: UInt64) { words = (word0, word1) }

    /// Whether the mask holds a kind number (known to this host or not).
    public func contains(rawKind: UInt32) -> Bool {
        guard rawKind < SH_EVENT_KIND_LIMIT else { return false }
        let word = rawKind < 64 ? words.0 : words.1
        return word & (1 << UInt64(rawKind % 64)) != 0
    }

    /// Whether the mask holds `kind`.
    public func contains(_ kind: EventKind) -> Bool { contains(rawKind: kind.rawValue) }

    /// The kinds this host knows, in kind order.
    public var knownKinds: [EventKind] { EventKind.allCases.filter(contains) }

    /// Kind numbers set in the mask that this host does not know (from a newer SDK).
    public var unknownRawKinds: [UInt32] {
        (0..<SH_EVENT_KIND_LIMIT).filter { contains(rawKind: $0) && EventKind(rawValue: $0) == nil }
    }

    /// Whether the mask shares a kind with `other`.
    public func intersects(_ other: EventMask) -> Bool { words.0 & other.words.0 != 0 || words.1 & other.words.1 != 0 }

    /// A mask of `kinds`.
    public init(kinds: some Sequence<EventKind>) {
        self.init(0, 0)
        for kind in kinds where kind.rawValue < SH_EVENT_KIND_LIMIT {
            if kind.rawValue < 64 {
                words.0 |= 1 << UInt64(kind.rawValue)
            } else {
                words.1 |= 1 << UInt64(kind.rawValue % 64)
            }
        }
    }

    public static func == (a: EventMask, b: EventMask) -> Bool { a.words == b.words }
}
