import Foundation
import TestSupport
import Testing

/// Every manifest error servicehost-metagen reports: the build fails (status 1, no output file)
/// with one line naming the manifest, the key's JSON path and the reason.
@Suite(.timeLimit(.minutes(10)))
struct ManifestErrorTests {
    /// One service with `members` added to a valid minimal one; `id` and `type` are JSON values.
    private static func service(_ members: String = "", id: String = #""com.example.a""#, type: String = #""A""#)
        -> String
    {
        #"{"services":[{"id":"# + id + #","type":"# + type + (members.isEmpty ? "" : "," + members) + "}]}"
    }

    private static let long128 = "a." + String(repeating: "b", count: 126)
    private static let scenes = #""events":["scenes"]"#

    /// (manifest, JSON path, a fragment of the reason).
    static let cases: [(String, String, String)] = [
        // The document.
        (#"{"services": [}"#, "line 1, column 15", "invalid JSON: unexpected '}', expected a value"),
        ("{\n  \"services\": [1,]\n}", "line 2, column 18", "invalid JSON: unexpected ']'"),
        (#"{"services":[],"services":[]}"#, "line 1, column 16", "invalid JSON: duplicate key \"services\""),
        (#"[]"#, "(root)", "expected an object, found an array"),
        (#""services""#, "(root)", "expected an object, found a string"),
        (
            #"{"services":[{"id":"com.example.a","type":"A"}],"plugin":1}"#, "plugin",
            "unknown key \"plugin\" (expected one of: services)"
        ),
        (#"{}"#, "services", "missing (a non-empty array of services)"),
        (#"{"services":{}}"#, "services", "expected an array, found an object"),
        (#"{"services":[]}"#, "services", "must list at least one service"),
        (#"{"services":[null]}"#, "services[0]", "expected an object, found null"),
        (
            #"{"services":[{"id":"com.example.a","type":"A"},true]}"#, "services[1]",
            "expected an object, found a Boolean"
        ),
        (
            service(#""colour":"red""#), "services[0].colour",
            "unknown key \"colour\" (expected one of: id, type, name, version, events, priority, activation, requires, after, shortcuts, settingsSchema, urls, activities, subscribes, sceneRoles, answers)"
        ),
        // activation
        (service(#""activation":true"#), "services[0].activation", "expected \"eager\" or \"lazy\", found a Boolean"),
        (
            service(#""activation":"lazzy""#), "services[0].activation",
            "expected \"eager\" or \"lazy\", found \"lazzy\" (did you mean \"lazy\"?)"
        ),
        (
            service(#""activation":"lazy""#), "services[0].activation",
            "lists none of those (lifecycle events never open a lazy service)"
        ),
        // id
        (#"{"services":[{"type":"A"}]}"#, "services[0].id", "missing"),
        (service(id: #"7"#), "services[0].id", "expected a string, found a number"),
        (service(id: #""com.exa\u0000mple""#), "services[0].id", "must not contain NUL characters"),
        (service(id: #""logger""#), "services[0].id", "\"logger\" is not a reverse-DNS id"),
        (service(id: #""com..example""#), "services[0].id", "is not a reverse-DNS id"),
        (service(id: #""com.example.a b""#), "services[0].id", "is not a reverse-DNS id"),
        (service(id: #""com.exämple""#), "services[0].id", "is not a reverse-DNS id"),
        (service(id: "\"" + long128 + "\""), "services[0].id", "is not a reverse-DNS id"),
        (
            #"{"services":[{"id":"com.example.a","type":"A"},{"id":"com.example.a","type":"B"}]}"#, "services[1].id",
            "duplicate id \"com.example.a\" (also services[0].id)"
        ),
        // type
        (#"{"services":[{"id":"com.example.a"}]}"#, "services[0].type", "missing (the Swift class of the service)"),
        (service(type: #"["A"]"#), "services[0].type", "expected a string, found an array"),
        (service(type: #""""#), "services[0].type", "\"\" is not a Swift type name"),
        (service(type: #""1A""#), "services[0].type", "\"1A\" is not a Swift type name"),
        (service(type: #""My-Service""#), "services[0].type", "\"My-Service\" is not a Swift type name"),
        (service(type: #""Outer..Inner""#), "services[0].type", "is not a Swift type name"),
        (service(type: #""A()""#), "services[0].type", "is not a Swift type name"),
        // name and version
        (service(#""name":false"#), "services[0].name", "expected a string, found a Boolean"),
        (service(#""name":"""#), "services[0].name", "must not be empty"),
        (
            service(#""name":""# + String(repeating: "n", count: 64) + #"""#), "services[0].name",
            "too long (64 bytes, at most 63)"
        ),
        (service(#""version":1.0"#), "services[0].version", "expected a string, found a number"),
        (service(#""version":"""#), "services[0].version", "must not be empty"),
        (
            service(#""version":""# + String(repeating: "1", count: 32) + #"""#), "services[0].version",
            "too long (32 bytes, at most 31)"
        ),
        // events
        (service(#""events":"lifecycle""#), "services[0].events", "expected an array of event names, found a string"),
        (service(#""events":["lifecycle",3]"#), "services[0].events[1]", "expected a string, found a number"),
        (
            service(#""events":["didBecomeActive","didBecomeActve"]"#), "services[0].events[1]",
            "unknown event \"didBecomeActve\" (did you mean \"didBecomeActive\"?) (expected lifecycle, push, scenes, all, willFinishLaunching,"
        ),
        (
            service(#""evnets":["lifecycle"]"#), "services[0].evnets",
            "unknown key \"evnets\" (did you mean \"events\"?) (expected one of:"
        ),
        (service(#""events":["Lifecycle"]"#), "services[0].events[0]", "unknown event \"Lifecycle\""),
        // priority
        (service(#""priority":"high""#), "services[0].priority", "expected an integer, found a string"),
        (
            service(#""priority":1.5"#), "services[0].priority",
            "expected an integer in -2147483648...2147483647, found 1.5"
        ),
        (
            service(#""priority":2147483648"#), "services[0].priority",
            "expected an integer in -2147483648...2147483647, found 2147483648"
        ),
        (
            service(#""priority":-2147483649"#), "services[0].priority",
            "expected an integer in -2147483648...2147483647"
        ),
        // claims: shape
        (
            service(#""events":["openURL"],"urls":"myapp""#), "services[0].urls",
            "expected an array of strings, found a string"
        ),
        (service(#""events":["openURL"],"urls":[1]"#), "services[0].urls[0]", "expected a string, found a number"),
        (service(#""events":["openURL"],"urls":[""]"#), "services[0].urls[0]", "must not be empty"),
        (
            service(#""events":["notification"],"subscribes":["a","b\u0001"]"#), "services[0].subscribes[1]",
            "must not contain control characters"
        ),
        (
            service(#""events":["notification"],"subscribes":["a\u007f"]"#), "services[0].subscribes[0]",
            "must not contain control characters"
        ),
        (
            service(
                #""events":["continueUserActivity"],"activities":[""# + String(repeating: "x", count: 120) + #""]"#),
            "services[0].activities[0]", "too long (120 bytes, at most 119)"
        ),
        (
            service(#""events":["notification"],"subscribes":["a","b","a"]"#), "services[0].subscribes[2]",
            "duplicate \"a\" (also services[0].subscribes[0])"
        ),
        // claims: the event each needs
        (
            service(#""urls":["myapp"]"#), "services[0].urls",
            "claims URLs but services[0].events does not list any of \"openURL\", \"sceneOpenURLContexts\""
        ),
        (
            service(#""events":["lifecycle"],"activities":["x"]"#), "services[0].activities",
            "claims user activities but services[0].events does not list any of \"continueUserActivity\", \"sceneContinueUserActivity\""
        ),
        (
            service(#""events":["push"],"subscribes":["*"]"#), "services[0].subscribes",
            "claims notifications but services[0].events does not list \"notification\", so the host would never deliver them (add \"notification\" to events)"
        ),
        (
            service(#""events":["lifecycle"],"sceneRoles":["car"]"#), "services[0].sceneRoles",
            "claims scene roles but services[0].events does not list any of \"configurationForConnecting\""
        ),
        // claims: URLs
        (service(#""events":["openURL"],"urls":["myapp:x"]"#), "services[0].urls[0]", "a ':' must start \"://\""),
        (
            service(#""events":["openURL"],"urls":["1app"]"#), "services[0].urls[0]",
            "\"1app\" does not start with a URL scheme"
        ),
        (
            service(#""events":["openURL"],"urls":["my_app"]"#), "services[0].urls[0]",
            "does not start with a URL scheme"
        ),
        (
            service(#""events":["openURL"],"urls":["://example.com"]"#), "services[0].urls[0]",
            "does not start with a URL scheme"
        ),
        (
            service(#""events":["openURL"],"urls":["https://"]"#), "services[0].urls[0]",
            "\"https://\" has \"://\" but no host"
        ),
        (
            service(#""events":["openURL"],"urls":["https://example.com/path"]"#), "services[0].urls[0]",
            "(found '/'; no path, port or user)"
        ),
        (
            service(#""events":["openURL"],"urls":["https://example.com:8080"]"#), "services[0].urls[0]",
            "(found ':'; no path, port or user)"
        ),
        (service(#""events":["openURL"],"urls":["https://ex ample.com"]"#), "services[0].urls[0]", "(found byte 0x20;"),
        (
            service(#""events":["openURL"],"urls":["MyApp","myapp"]"#), "services[0].urls[1]",
            "duplicate \"myapp\" (also services[0].urls[0])"
        ),
        // claims: scene roles
        (
            service(scenes + #","sceneRoles":["watch"]"#), "services[0].sceneRoles[0]",
            "unknown scene role \"watch\" (one of main, car, external)"
        ),
        (service(scenes + #","sceneRoles":["car","car"]"#), "services[0].sceneRoles[1]", "duplicate \"car\""),
        // requires and after
        (
            service(#""requires":["dev.x"]"#), "services[0].requires",
            "expected an object from service ids to version ranges, found an array"
        ),
        (
            service(#""requires":{"dev.x":">=1.x"}"#), "services[0].requires.dev.x",
            "invalid version range: \">=1.x\" is not a semantic version"
        ),
        (service(#""requires":{"dev.x":2}"#), "services[0].requires.dev.x", "expected a string, found a number"),
        (
            service(#""requires":{"nodots":""}"#), "services[0].requires.nodots",
            "\"nodots\" is not a reverse-DNS service id"
        ),
        (
            service(#""requires":{"com.example.a":""}"#), "services[0].requires.com.example.a",
            "a service cannot depend on itself"
        ),
        (
            service(#""requires":{"dev.x":"\#(String(repeating: ">=1 ", count: 30))"}"#), "services[0].requires.dev.x",
            "the id and range are too long together"
        ),
        (service(#""after":"dev.x""#), "services[0].after", "expected an array of service ids, found a string"),
        (
            service(#""after":["dev.x","dev.x"]"#), "services[0].after[1]",
            "duplicate \"dev.x\" (also services[0].after[0])"
        ),
        (
            service(#""shortcuts":[{"id":"compose"}]"#), "services[0].shortcuts",
            "does not list \"performActionForShortcutItem\""
        ),
        (
            service(#""events":["performActionForShortcutItem"],"shortcuts":[{"id":"new entry"}]"#),
            "services[0].shortcuts[0].id", "may hold only letters, digits and '-'"
        ),
        (
            service(#""events":["performActionForShortcutItem"],"shortcuts":[{"id":"a"},{"id":"a"}]"#),
            "services[0].shortcuts[1].id", "duplicate \"a\" (also services[0].shortcuts[0])"
        ),
        (
            service(#""events":["performActionForShortcutItem"],"shortcuts":[{"id":"a","colour":"red"}]"#),
            "services[0].shortcuts[0].colour", "unknown key \"colour\""
        ),
        (
            service(#""events":["performActionForShortcutItem"],"shortcuts":[{"id":"a","title":"x\ny"}]"#),
            "services[0].shortcuts[0].title", "must not contain control characters"
        ),
        (
            service(#""events":["performActionForShortcutItem"],"shortcuts":[{"title":"x"}]"#),
            "services[0].shortcuts[0]", "needs an \"id\""
        ),
        (
            service(#""settingsSchema":{"properties":{"level":{"enum":["a"],"defualt":"a"}}}"#),
            "services[0].settingsSchema.level.defualt", "is not a keyword of the settings schema"
        ),
        (
            service(#""settingsSchema":{"type":"integer","default":"x"}"#),
            "services[0].settingsSchema.default", "must be integer, not a string"
        ),
        // An error in a later service names that service.
        (
            #"{"services":[{"id":"com.example.a","type":"A"},{"id":"com.example.b","type":"B","events":["x"]}]}"#,
            "services[1].events[0]", "unknown event \"x\""
        ),
    ]

    @Test(arguments: cases)
    func invalidManifest_failsTheBuild_namingTheKeyPath(manifest: String, path: String, reason: String) throws {
        let run = try Metagen().run(manifest)
        let error = try #require(Metagen.error(of: run), "status \(run.status), stderr: \(run.stderr)")
        #expect(error.path == path)
        #expect(error.reason.contains(reason), "\(error.reason)")
    }

    @Test func invalidUTF8_isAnInvalidJSONError_withItsLineAndColumn() throws {
        let run = try Metagen().run(bytes: Array("{\n\"services\": [\"".utf8) + [0xFF] + Array("\"]}".utf8))
        let error = try #require(Metagen.error(of: run), "\(run.stderr)")
        #expect(error.path == "line 2, column 14")
        #expect(error.reason == "invalid JSON: invalid UTF-8 in string")
    }

    @Test func aMissingManifest_cannotBeRead() throws {
        let metagen = try Metagen()
        let missing = metagen.scratch.file("absent.json")
        let result = try Command.run(
            try Repository.product("servicehost-metagen"), [missing, metagen.scratch.file("out.swift")])
        #expect(result.status == 1)
        #expect(result.stderr == "\(missing): cannot read: No such file or directory\n")
        #expect(!FileManager.default.fileExists(atPath: metagen.scratch.file("out.swift")))
    }

    @Test func anOutputThatCannotBeWritten_failsTheBuild() throws {
        let metagen = try Metagen()
        let manifest = try metagen.scratch.write("servicehost.json", Array(Self.service().utf8))
        let output = metagen.scratch.file("missing-folder/out.swift")
        let result = try Command.run(try Repository.product("servicehost-metagen"), [manifest, output])
        #expect(result.status == 1)
        #expect(result.stderr == "\(manifest): cannot write \(output): No such file or directory\n")
    }

    @Test func wrongArguments_printTheUsage() throws {
        for arguments in [[], ["only-one.json"], ["a", "b", "c"]] {
            let result = try Command.run(try Repository.product("servicehost-metagen"), arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr == "usage: servicehost-metagen <servicehost.json> <output.swift>\n", "\(arguments)")
        }
    }
}
