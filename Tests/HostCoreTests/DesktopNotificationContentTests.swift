import ServiceVocabulary
import Testing

@testable import HostCore

/// What a push becomes on the desktop (`Notify`'s summary, body, actions and sound).
@Suite struct DesktopNotificationContentTests {
    static let categories = ["m": [DesktopNotification.Action(id: "reply", title: "Reply")]]

    static func shown(_ json: String, _ options: PresentationOptions = [.banner]) throws -> DesktopNotification? {
        DesktopNotification(try PushPayload(parsing: Array(json.utf8)), options: options, categories: categories)
    }

    @Test func theAlertsTitle_isTheSummary_andItsSubtitleAndBody_theBody() throws {
        let shown = try #require(
            try Self.shown(#"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B"},"category":"m"}}"#))
        #expect(shown.summary == "T" && shown.body == "S\nB")
        #expect(shown.actions.map(\.id) == ["reply"])
        #expect(shown.transient && shown.sound == nil)
    }

    @Test func withoutATitle_theFirstLineIsTheSummary() throws {
        #expect(try Self.shown(#"{"aps":{"alert":"Hello"}}"#).map { [$0.summary, $0.body] } == ["Hello", ""])
        #expect(try Self.shown(#"{"aps":{"alert":{"body":"B"}}}"#).map { [$0.summary, $0.body] } == ["B", ""])
    }

    @Test func nothingToShow_isNil() throws {
        #expect(try Self.shown(#"{"aps":{"badge":3}}"#) == nil)
        #expect(try Self.shown(#"{"aps":{"alert":{}}}"#) == nil)
        #expect(try Self.shown(#"{"route":"x"}"#) == nil)
    }

    @Test func theSound_onlyWithSound_andItsName() throws {
        let withSound: PresentationOptions = [.banner, .list, .sound]
        #expect(try Self.shown(#"{"aps":{"alert":"a","sound":"default"}}"#, withSound)?.sound == "message-new-instant")
        #expect(try Self.shown(#"{"aps":{"alert":"a","sound":{"name":"bell"}}}"#, withSound)?.sound == "bell")
        #expect(try Self.shown(#"{"aps":{"alert":"a","sound":"bell"}}"#)?.sound == nil)
        #expect(try Self.shown(#"{"aps":{"alert":"a"}}"#, withSound)?.transient == false)
    }

    @Test func anUnknownCategory_hasNoActions_andDefaultIsTheDefaultAction() throws {
        #expect(try Self.shown(#"{"aps":{"alert":"a","category":"other"}}"#)?.actions == [])
        #expect(DesktopNotification.action(forKey: "default") == "com.apple.UNNotificationDefaultActionIdentifier")
        #expect(DesktopNotification.action(forKey: "reply") == "reply")
        #expect(DesktopNotification.escaped("a<b>&c") == "a&lt;b&gt;&amp;c")
    }
}
