import Foundation
import ServiceABI
import TestSupport
import Testing

@testable import HostCore

/// The one vocabulary (ServiceVocabulary) against the C header it mirrors: every event kind
/// and enum case in servicehost/*.h has exactly one Swift entry with the same number, and
/// the other way round.
@Suite struct VocabularyTests {
    @Test func everyEventKindInEventsH_hasExactlyOneEntry_andEveryEntryIsInEventsH() throws {
        let header = try HeaderEvents.read()
        for event in header {
            let entries = EventKind.allCases.filter { $0.rawValue == event.number }
            #expect(entries.count == 1, "SH_EVENT_\(event.identifier) = \(event.number) has \(entries.count) entries")
        }
        for kind in EventKind.allCases {
            let matches = header.filter { $0.number == kind.rawValue }
            #expect(matches.count == 1, "\(kind.name) = \(kind.rawValue) is \(matches.count) times in events.h")
            guard let event = matches.first else { continue }
            #expect(cIdentifier(kind.name) == event.identifier, "\(kind.name) is SH_EVENT_\(event.identifier)")
            #expect(kind.name == event.quotedName, "events.h calls \(kind.rawValue) \"\(event.quotedName ?? "?")\"")
            #expect(
                kind.data.cStruct == event.dataStruct,
                "\(kind.name): events.h says data is \(event.dataStruct ?? "NULL")")
            #expect(kind.needsCompletion == event.hasCompletion, "\(kind.name): events.h on its completion")
        }
        #expect(Set(EventKind.allCases.map(\.name)).count == EventKind.allCases.count)
        #expect(EventKind.allCases.allSatisfy { $0.rawValue < SH_EVENT_KIND_LIMIT })
    }

    @Test func theLifecycleAndScenesGroups_areTheHeadersMasks() throws {
        let numbers = Dictionary(uniqueKeysWithValues: try HeaderEvents.read().map { ($0.identifier, $0.number) })
        for (group, macro) in [(EventGroup.lifecycle, "SH_EVENTS_LIFECYCLE"), (.scenes, "SH_EVENTS_SCENES")] {
            let listed = try HeaderEvents.maskMembers(macro).map { numbers[$0] }
            #expect(!listed.isEmpty && listed == group.kinds.map(\.rawValue), "\(group.name) differs from \(macro)")
        }
        #expect(
            EventGroup.push.kinds == [
                .willPresentNotification, .didReceiveNotificationResponse, .didReceiveRemoteNotification,
                .didRegisterForRemoteNotifications, .didFailToRegisterForRemoteNotifications,
                .didChangeNotificationAuthorization,
            ])
        #expect(EventKind.allCases.filter(\.isSceneEvent) == EventGroup.scenes.kinds)
        // A manifest name is either a group or an event, never both ("all" is metagen's).
        let groupNames = EventGroup.allCases.map(\.name) + ["all"]
        #expect(Set(groupNames).isDisjoint(with: EventKind.allCases.map(\.name)))
    }

    @Test(arguments: [
        ("SH_APP_", AppState.allCases.map { ($0.name, Int64($0.rawValue)) }),
        ("SH_SCENE_", SceneState.allCases.map { ($0.name, Int64($0.rawValue)) }),
        ("SH_FETCH_", FetchResult.allCases.map { ($0.name, Int64($0.rawValue)) }),
        ("SH_LOG_", LogLevel.allCases.map { ($0.name, Int64($0.rawValue)) }),
        ("SH_PRESENT_", PresentationOptions.named.map { ($0.name, Int64($0.option.rawValue)) }),
        ("SH_AUTHORIZATION_", AuthorizationStatus.allCases.map { ($0.name, Int64($0.rawValue)) }),
        ("SH_AUTHORIZE_", AuthorizationOptions.named.map { ($0.name, Int64($0.option.rawValue)) }),
    ])
    func everyEnumCase_isTheHeadersConstant_andViceVersa(prefix: String, cases: [(String, Int64)]) throws {
        let header = try HeaderEvents.enumerators(prefix: prefix)
        let swift = Dictionary(uniqueKeysWithValues: cases.map { (prefix + cIdentifier($0.0), $0.1) })
        #expect(!header.isEmpty)
        #expect(swift == header)
    }

    @Test func namesShownToUsers_readBackAndMerge() {
        #expect(LogLevel(name: "warn") == .warn && LogLevel(name: "verbose") == nil)
        #expect(EventKind(name: "openURL") == .openURL && EventKind(name: "OpenURL") == nil)
        #expect(EventGroup(name: "push") == .push)
        #expect("\(AppState.notRunning) \(SceneState.foregroundActive)" == "notRunning foregroundActive")
        #expect(LogLevel.error < .debug)
        // The host merges fetch answers as the minimum: new data wins, then no data.
        #expect([FetchResult.failed, .newData, .noData].min() == .newData)
        #expect([FetchResult.failed, .noData].min() == .noData)
        // Host traces list options most visible first; ServiceKit's description in bit order.
        let options: PresentationOptions = [.sound, .banner, .badge]
        #expect(options.names == ["banner", "sound", "badge"])
        #expect(options.description == "badge|sound|banner")
        #expect(PresentationOptions().description == "none" && PresentationOptions().names.isEmpty)
    }

    @Test func theHostReadsRawAnswers_ignoringUnknownBitsAndErrors() {
        #expect(FetchResult(Int32(SH_FETCH_NO_DATA)) == .noData && FetchResult(Int32(7)) == nil)
        #expect(PresentationOptions(Int32(SH_PRESENT_LIST) | 0x100).names == ["list"])
        #expect(PresentationOptions(Int32(SH_ERROR)) == [])
    }
}

/// `didReceiveMemoryWarning` → `DID_RECEIVE_MEMORY_WARNING`, `openURL` → `OPEN_URL`: the
/// C spelling of a vocabulary name, without its prefix.
private func cIdentifier(_ name: String) -> String {
    let characters = Array(name)
    var result = ""
    for (index, character) in characters.enumerated() {
        // A word starts at a capital after a lowercase letter, or at the last capital of an
        // acronym followed by a lowercase letter (URLContexts → URL_CONTEXTS).
        if character.isUppercase, index > 0,
            characters[index - 1].isLowercase || (index + 1 < characters.count && characters[index + 1].isLowercase)
        {
            result.append("_")
        }
        result.append(character.uppercased())
    }
    return result
}

/// What servicehost/*.h says, read as text (the imported constants cannot be enumerated).
private enum HeaderEvents {
    /// One `SH_EVENT_*` enumerator and the comment above it.
    struct Event {
        let identifier: String
        let number: UInt32
        let quotedName: String?
        let dataStruct: String?
        let hasCompletion: Bool
    }

    static func text(_ file: String) throws -> String {
        try String(
            contentsOf: Repository.root.appendingPathComponent("Sources/ServiceABI/include/servicehost/\(file)"),
            encoding: .utf8)
    }

    /// The kinds of `enum sh_event_kind`, in order.
    static func read() throws -> [Event] {
        let text = try text("events.h")
        var events: [Event] = []
        for match in text.matches(of: try Regex(#"\n\s*SH_EVENT_([A-Z_]+)\s*=\s*(\d+)\s*,"#)) {
            let before = text[..<match.range.lowerBound]
            let comment = before.range(of: "/*", options: .backwards).map { String(before[$0.upperBound...]) } ?? ""
            // One line: drop the " * " that continues a comment onto the next line.
            let flat = comment.replacing(try Regex(#"\n\s*\*(?!/)"#), with: " ").replacing(
                try Regex(#"\s+"#), with: " ")
            let quoted = flat.firstMatch(of: try Regex(#"^ ?"(\w+)":"#)).map { String($0.output[1].substring!) }
            let data = flat.firstMatch(of: try Regex(#"data is (?:const )?(sh_\w+|NULL)"#))
                .map { String($0.output[1].substring!) }
            events.append(
                Event(
                    identifier: String(match.output[1].substring!), number: UInt32(match.output[2].substring!)!,
                    quotedName: quoted, dataStruct: data == "NULL" ? nil : data,
                    hasCompletion: flat.contains("completion is set")))
        }
        return events
    }

    /// The `SH_EVENT_*` names a `#define SH_EVENTS_*` mask is built from, in order.
    static func maskMembers(_ macro: String) throws -> [String] {
        let text = try text("events.h") + text("scenes.h")
        guard let start = text.range(of: "#define \(macro) ") else { return [] }
        let body = text[start.upperBound...].prefix { $0 != "#" }
        return body.matches(of: try Regex(#"SH_EVENT_BIT\(SH_EVENT_([A-Z_]+)\)"#)).map {
            String($0.output[1].substring!)
        }
    }

    /// Every enumerator `PREFIXNAME = VALUE,` in the headers whose name starts with `prefix`
    /// (values are integers or `1u << n`).
    static func enumerators(prefix: String) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for file in ["version.h", "events.h", "scenes.h", "host.h"] {
            let text = try text(file)
            for match in text.matches(of: try Regex(#"\n\s*(\#(prefix)[A-Z_]+)\s*=\s*([^,\n]+),"#)) {
                let value = String(match.output[2].substring!).trimmingCharacters(in: .whitespaces)
                let parts = value.components(separatedBy: " << ")
                let number =
                    parts.count == 2
                    ? Int64(parts[0].trimmingCharacters(in: CharacterSet(charactersIn: "u")))! << Int64(parts[1])!
                    : Int64(value)!
                result[String(match.output[1].substring!)] = number
            }
        }
        return result
    }
}
