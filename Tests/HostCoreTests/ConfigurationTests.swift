import Glibc
import ServiceJSON
import TestSupport
import Testing

@testable import HostCore

/// `--config FILE`: every key, its default, and every error with the key's path.
@Suite struct ConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> HostConfiguration {
        try HostConfiguration.parse(text, file: "services.json")
    }

    /// The error `text` gives, as the user reads it.
    private func failure(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func everyKey_isReadIntoTheServiceConfiguration() throws {
        let configuration = try parse(
            """
            {
              "services": {
                "com.example.a": {
                  "enabled": true, "priority": -7, "requires": ["com.example.b"], "after": ["com.example.c", "com.example.d"],
                  "settings": {"verbose": true, "name": "x", "limits": [1, 2.5]}, "policy": "required",
                  "isolation": "process", "trusted": false, "eventTimeout": 2.5, "restartResetAfter": 300,
                  "healthCheck": {"interval": 10, "timeout": 2, "unhealthyAfter": 4, "onUnhealthy": "restart"}
                },
                "com.example.c": { "healthCheck": {"interval": 3}, "requires": ["com.example.d"],
                  "bindsTo": ["com.example.a"], "partOf": ["com.example.d"] },
                "com.example.b": { "enabled": false, "isolation": "in-process" }
              }
            }
            """)
        let a = try #require(configuration.services["com.example.a"])
        #expect(a.id == "com.example.a")
        #expect(a.enabled && a.priority == -7 && a.policy == .required)
        #expect(a.requires == ["com.example.b"] && a.after == ["com.example.c", "com.example.d"])
        #expect(a.settings == ["verbose": true, "name": "x", "limits": [1, 2.5]])
        #expect(a.isolation == .process && a.trusted == false && a.eventTimeout == 2.5)
        #expect(a.restartResetAfter == 300 && IsolationPolicy(a).restartResetAfter == 300)
        #expect(configuration.services["com.example.b"]?.enabled == false)
        #expect(configuration.services["com.example.b"]?.isolation == .inProcess)
        #expect(a.healthCheck == HealthCheckPolicy(interval: 10, timeout: 2, unhealthyAfter: 4, onUnhealthy: .restart))
        // The defaults: a timeout of the shorter of 5 s and the interval, 3 checks, report.
        #expect(
            configuration.services["com.example.c"]?.healthCheck
                == HealthCheckPolicy(interval: 3, timeout: 3, unhealthyAfter: 3, onUnhealthy: .report))
        // bindsTo and partOf are requirements too (the start plan sees them as requires).
        let c = configuration.services["com.example.c"]
        #expect(c?.bindsTo == ["com.example.a"] && c?.partOf == ["com.example.d"])
        #expect(c?.requires == ["com.example.d", "com.example.a"])
        #expect(configuration.services.count == 3)
    }

    /// minisign prints key ids without leading zeros (`%llX`): a 15-digit id is one of them.
    @Test func aRevokedKeyID_withItsLeadingZeroLeftOut_isTheSameKey() throws {
        let configuration = try parse(#"{"revokedKeys": ["ABCDEF0123456789", "bcdef0123456789"]}"#)
        #expect(configuration.trust.revokedKeyIDs == ["ABCDEF0123456789", "0BCDEF0123456789"])
    }

    @Test func anEmptyServiceObject_hasEveryDefault() throws {
        let service = try #require(try parse(#"{"services": {"com.example.a": {}}}"#).services["com.example.a"])
        #expect(service == ServiceConfiguration(id: "com.example.a"))
        #expect(service.enabled && service.priority == nil && service.requires.isEmpty && service.after.isEmpty)
        #expect(service.settings == nil && service.settingsJSON == nil && service.policy == .optional)
        #expect(service.isolation == nil && service.trusted == nil && service.eventTimeout == nil)
        #expect(service.restartResetAfter == nil && service.healthCheck == nil)
    }

    @Test func anEmptyDocument_configuresNothing() throws {
        #expect(try parse("{}").services.isEmpty)
        #expect(try parse(#"{"services": {}}"#).services.isEmpty)
    }

    @Test func settings_areKeptAsCompactJSONBytesForTheLaunchOptions() throws {
        let service = try #require(
            try parse(
                """
                {"services": {"com.example.a": {"settings": { "b": [true, null], "a": 1, "s": "é\\n" }}}}
                """
            ).services["com.example.a"])
        let bytes = try #require(service.settingsJSON)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":1,"b":[true,null],"s":"é\n"}"#)
        #expect(try JSONValue(parsing: bytes) == .object(service.settings!))
    }

    @Test(arguments: [
        // The document and the services object.
        (#"[]"#, #"services.json: the configuration must be a JSON object like {"services": {…}}, found an array"#),
        (#"{"service": {}}"#, #"services.json: service: unknown key (did you mean "services"?)"#),
        (
            #"{"onlyConfigured": true}"#,
            "services.json: onlyConfigured: unknown key (--only-configured is a command-line flag, not a configuration key)"
        ),
        (
            #"{"version": 1}"#,
            "services.json: version: unknown key (known keys: notificationCategories, notifications, revokedKeys,"
                + " sandbox, services, signatures, sources, trustedKeys)"
        ),
        // System sources (issue 38).
        (
            #"{"sources": ["sleep"]}"#,
            #"services.json: sources: expected an object of "on" or "off" by source name, found an array"#
        ),
        (#"{"sources": {"netwrk": "off"}}"#, #"services.json: sources.netwrk: unknown key (did you mean "network"?)"#),
        (#"{"sources": {"sleep": false}}"#, #"services.json: sources.sleep: expected "on" or "off", found false"#),
        // Desktop notifications (issue 39).
        (#"{"notifications": false}"#, #"services.json: notifications: expected "on" or "off", found false"#),
        (
            #"{"notificationCategories": {"m": [{"id": "default", "title": "Open"}]}}"#,
            #"services.json: notificationCategories.m[0].id: "default" is the click on the notification itself; choose another id"#
        ),
        (
            #"{"notificationCategories": {"m": [{"id": "a", "title": "A"}, {"id": "a", "title": "B"}]}}"#,
            #"services.json: notificationCategories.m[1].id: action "a" is listed twice"#
        ),
        (
            #"{"notificationCategories": {"m": [{"id": "a", "title": "A\u0007"}]}}"#,
            "services.json: notificationCategories.m[0].title: expected a non-empty string without control characters"
        ),
        (
            #"{"notificationCategories": {"m": [{"id": "a", "label": "A"}]}}"#,
            #"services.json: notificationCategories.m[0].label: unknown key (known keys: id, title)"#
        ),
        (
            #"{"notificationCategories": {"m": {}}}"#,
            #"services.json: notificationCategories.m: expected an array of {"id", "title"} actions, found an object"#
        ),
        (#"{"services": []}"#, "services.json: services: expected an object keyed by service id, found an array"),
        (
            #"{"services": {"logger": {}}}"#,
            #"services.json: services.logger: invalid service id "logger": it is not reverse-DNS (expected at least two labels, like com.example.name)"#
        ),
        (
            #"{"services": {"com.example/x.y": {}}}"#,
            #"services.json: services.com.example/x.y: invalid service id "com.example/x.y": it may hold only ASCII letters, digits, '-', '_' and '.'"#
        ),
        (
            #"{"services": {"com.example.x": true}}"#,
            "services.json: services.com.example.x: expected an object of settings for the service, found true"
        ),
        // Unknown keys in a service.
        (
            #"{"services": {"com.example.x": {"priorty": 1}}}"#,
            #"services.json: services.com.example.x.priorty: unknown key (did you mean "priority"?)"#
        ),
        (
            #"{"services": {"com.example.x": {"Enabled": false}}}"#,
            #"services.json: services.com.example.x.Enabled: unknown key (did you mean "enabled"?)"#
        ),
        (
            #"{"services": {"com.example.x": {"requries": []}}}"#,
            #"services.json: services.com.example.x.requries: unknown key (did you mean "requires"?)"#
        ),
        (
            #"{"services": {"com.example.x": {"eventTimout": 1}}}"#,
            #"services.json: services.com.example.x.eventTimout: unknown key (did you mean "eventTimeout"?)"#
        ),
        (
            #"{"services": {"com.example.x": {"color": "red"}}}"#,
            "services.json: services.com.example.x.color: unknown key (known keys: enabled, priority, requires,"
                + " bindsTo, partOf, after, settings, policy, isolation, trusted, eventTimeout, restartResetAfter,"
                + " healthCheck, activation, requests, sha256, sandbox)"
        ),
        // Wrong types and values.
        (
            #"{"services": {"com.example.x": {"enabled": "no"}}}"#,
            #"services.json: services.com.example.x.enabled: expected true or false, found a string ("no")"#
        ),
        (
            #"{"services": {"com.example.x": {"priority": 1.5}}}"#,
            "services.json: services.com.example.x.priority: expected an integer from -2147483648 to 2147483647, found 1.5"
        ),
        (
            #"{"services": {"com.example.x": {"priority": 3000000000}}}"#,
            "services.json: services.com.example.x.priority: expected an integer from -2147483648 to 2147483647, found 3000000000"
        ),
        (
            #"{"services": {"com.example.x": {"priority": "high"}}}"#,
            #"services.json: services.com.example.x.priority: expected an integer from -2147483648 to 2147483647, found a string ("high")"#
        ),
        (
            #"{"services": {"com.example.x": {"requires": "com.example.y"}}}"#,
            #"services.json: services.com.example.x.requires: expected an array of service ids, found a string ("com.example.y")"#
        ),
        (
            #"{"services": {"com.example.x": {"requires": ["com.example.y", 2]}}}"#,
            "services.json: services.com.example.x.requires[1]: expected a service id (a string), found 2"
        ),
        (
            #"{"services": {"com.example.x": {"after": ["com..y"]}}}"#,
            #"services.json: services.com.example.x.after[0]: invalid service id "com..y": it has an empty label"#
        ),
        (
            #"{"services": {"com.example.x": {"requires": ["com.example.x"]}}}"#,
            "services.json: services.com.example.x.requires[0]: a service cannot depend on itself"
        ),
        (
            #"{"services": {"com.example.x": {"after": ["com.example.y", "com.example.y"]}}}"#,
            "services.json: services.com.example.x.after[1]: com.example.y is listed twice"
        ),
        (
            #"{"services": {"com.example.x": {"settings": [1]}}}"#,
            "services.json: services.com.example.x.settings: expected an object, found an array"
        ),
        (
            #"{"services": {"com.example.x": {"settings": null}}}"#,
            "services.json: services.com.example.x.settings: expected an object, found null"
        ),
        (
            #"{"services": {"com.example.x": {"policy": "requird"}}}"#,
            #"services.json: services.com.example.x.policy: expected "required" or "optional", found a string ("requird") (did you mean "required"?)"#
        ),
        (
            #"{"services": {"com.example.x": {"policy": true}}}"#,
            #"services.json: services.com.example.x.policy: expected "required" or "optional", found true"#
        ),
        (
            #"{"services": {"com.example.x": {"isolation": "inprocess"}}}"#,
            #"services.json: services.com.example.x.isolation: expected "in-process" or "process", found a string ("inprocess") (did you mean "in-process"?)"#
        ),
        (
            #"{"services": {"com.example.x": {"trusted": 1}}}"#,
            "services.json: services.com.example.x.trusted: expected true or false, found 1"
        ),
        (
            #"{"services": {"com.example.x": {"eventTimeout": 0}}}"#,
            "services.json: services.com.example.x.eventTimeout: expected a number of seconds more than 0 and at most 86400 (a day), found 0"
        ),
        (
            #"{"services": {"com.example.x": {"eventTimeout": -1.5}}}"#,
            "services.json: services.com.example.x.eventTimeout: expected a number of seconds more than 0 and at most 86400 (a day), found -1.5"
        ),
        (
            #"{"services": {"com.example.x": {"eventTimeout": 1e300}}}"#,
            "services.json: services.com.example.x.eventTimeout: expected a number of seconds more than 0 and at most 86400 (a day), found 1e+300"
        ),
        (
            #"{"services": {"com.example.x": {"eventTimeout": "5"}}}"#,
            #"services.json: services.com.example.x.eventTimeout: expected a number of seconds more than 0 and at most 86400 (a day), found a string ("5")"#
        ),
        (
            #"{"services": {"com.example.x": {"restartResetAfter": 0}}}"#,
            "services.json: services.com.example.x.restartResetAfter: expected a number of seconds greater than 0"
                + " and at most 31536000 (a year), found 0"
        ),
        (
            #"{"services": {"com.example.x": {"restartResetAfter": 1e300}}}"#,
            "services.json: services.com.example.x.restartResetAfter: expected a number of seconds greater than 0"
                + " and at most 31536000 (a year), found 1e+300"
        ),
        (
            #"{"services": {"com.example.x": {"restartResetAfter": "60"}}}"#,
            "services.json: services.com.example.x.restartResetAfter: expected a number of seconds greater than 0"
                + " and at most 31536000 (a year), found a string (\"60\")"
        ),
        (
            #"{"services": {"com.example.x": {"healthCheck": 10}}}"#,
            #"services.json: services.com.example.x.healthCheck: expected an object like {"interval": 10}, found 10"#
        ),
        (
            #"{"services": {"com.example.x": {"healthCheck": {}}}}"#,
            "services.json: services.com.example.x.healthCheck.interval: missing: seconds between checks"
        ),
        (
            #"{"services": {"com.example.x": {"healthCheck": {"interval": 5, "every": 2}}}}"#,
            "services.json: services.com.example.x.healthCheck.every: unknown key"
                + " (known keys: interval, timeout, unhealthyAfter, onUnhealthy)"
        ),
        (
            #"{"services": {"com.example.x": {"healthCheck": {"interval": 0}}}}"#,
            "services.json: services.com.example.x.healthCheck.interval: expected a number of seconds more than 0"
                + " and at most 86400 (a day), found 0"
        ),
        (
            #"{"services": {"com.example.x": {"healthCheck": {"interval": 5, "unhealthyAfter": 1.5}}}}"#,
            "services.json: services.com.example.x.healthCheck.unhealthyAfter: expected a whole number of checks"
                + " from 1 to 1000, found 1.5"
        ),
        (
            #"{"services": {"com.example.x": {"healthCheck": {"interval": 5, "unhealthyAfter": 1e300}}}}"#,
            "services.json: services.com.example.x.healthCheck.unhealthyAfter: expected a whole number of checks"
                + " from 1 to 1000, found 1e+300"
        ),
        (
            #"{"services": {"com.example.x": {"healthCheck": {"interval": 5, "onUnhealthy": "restrat"}}}}"#,
            #"services.json: services.com.example.x.healthCheck.onUnhealthy: expected "restart" or "report", found a string ("restrat") (did you mean "restart"?)"#
        ),
    ])
    func everyMistake_isAnErrorNamingTheFileAndTheKeysPath(_ text: String, _ expected: String) {
        #expect(failure(text) == expected)
    }

    @Test func sources_areReadAsSwitches() throws {
        #expect(try parse(#"{"sources": {"sleep": "off", "power": "on"}}"#).sources == ["sleep": false, "power": true])
        #expect(try parse("{}").sources.isEmpty)
    }

    @Test func notifications_andTheirCategories_areRead() throws {
        let read = try parse(
            #"{"notifications": "off", "notificationCategories": {"m": [{"id": "reply", "title": "Reply"}]}}"#)
        #expect(read.notifications.enabled == false)
        #expect(read.notifications.categories == ["m": [.init(id: "reply", title: "Reply")]])
        #expect(try parse("{}").notifications == DesktopNotificationSettings())
    }

    @Test func aSyntaxError_saysTheLineAndColumn() {
        #expect(
            failure("{\n  \"services\": {\n    \"com.example.x\": {,}\n  }\n}")
                == "services.json: line 3, column 23: unexpected ',', expected a string key")
        #expect(
            failure(#"{"services": {}, "services": {}}"#)
                == #"services.json: line 1, column 18: duplicate key "services""#)
    }

    @Test func anError_keepsTheKeyPathApart() {
        do {
            _ = try parse(#"{"services": {"com.example.x": {"priorty": 1}}}"#)
            Issue.record("no error")
        } catch {
            #expect(error.file == "services.json")
            #expect(error.keyPath == "services.com.example.x.priorty")
        }
    }

    @Test func suggestions_comeOnlyForCloseWords() {
        #expect(Suggestion.closest(to: "priorty", among: ConfigurationReader.serviceKeys) == "priority")
        #expect(Suggestion.closest(to: "aftre", among: ConfigurationReader.serviceKeys) == "after")
        #expect(Suggestion.closest(to: "setting", among: ConfigurationReader.serviceKeys) == "settings")
        #expect(Suggestion.closest(to: "x", among: ConfigurationReader.serviceKeys) == nil)
        #expect(Suggestion.closest(to: "timeout", among: ConfigurationReader.serviceKeys) == nil)
        #expect(Suggestion.editDistance(Array("ab".utf8), Array("ba".utf8)) == 1)
    }

    // MARK: Files

    @Test func load_readsTheFile() throws {
        let scratch = try Scratch()
        let path = try scratch.write("services.json", Array(#"{"services": {"com.example.x": {"priority": 3}}}"#.utf8))
        #expect(try HostConfiguration.load(path: path).services["com.example.x"]?.priority == 3)
        #expect(try HostConfiguration.loadIfPresent(path: path) != nil)
    }

    @Test func aMissingFile_isAnErrorUnlessOptional() throws {
        let scratch = try Scratch()
        let path = scratch.file("absent.json")
        #expect(try HostConfiguration.loadIfPresent(path: path) == nil)
        #expect(
            throws: ConfigurationError(
                file: path, code: .unreadable(SystemError(operation: "open", path: path, errno: ENOENT)))
        ) {
            try HostConfiguration.load(path: path)
        }
        #expect((try? HostConfiguration.load(path: path)) == nil)
        do {
            _ = try HostConfiguration.load(path: path)
            Issue.record("a missing file was read")
        } catch {
            #expect(error.description == "\(path): open failed: No such file or directory")
        }
    }

    @Test func aDirectoryOrFIFO_isNotReadAsAConfiguration() throws {
        let scratch = try Scratch()
        let directory = try scratch.folder("services.json")
        #expect(throws: ConfigurationError(file: directory, code: .notRegularFile(kind: "directory"))) {
            try HostConfiguration.loadIfPresent(path: directory)
        }
        let fifo = scratch.file("fifo.json")
        #expect(mkfifo(fifo, 0o600) == 0)
        // Never opened for a blocking read: the check comes first and O_NONBLOCK keeps open from waiting.
        #expect(throws: ConfigurationError(file: fifo, code: .notRegularFile(kind: "FIFO"))) {
            try HostConfiguration.load(path: fifo)
        }
    }

    @Test func theDefaultPath_isServicesJSONInTheFirstPluginDirectory() {
        #expect(HostConfiguration.defaultPath(pluginDirectories: ["lib", "more"]) == "lib/services.json")
        #expect(HostConfiguration.defaultPath(pluginDirectories: ["/opt/plugins/"]) == "/opt/plugins/services.json")
        #expect(HostConfiguration.defaultPath(pluginDirectories: []) == nil)
    }
}
