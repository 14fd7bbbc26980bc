import ServiceJSON
import Testing

@testable import HostCore

/// `sh_host.control` (issue 17): what the configuration's `requests` grant lets a service ask.
@Suite struct ServiceRequestTests {
    private func command(_ json: String) throws -> ControlRequest {
        try ControlRequest.parse(Array(json.utf8), maxPayload: 65536).get()
    }

    @Test func eventsCoverWhatAClientCauses_allCoversEverything_noneNothing() throws {
        let push = try command(#"{"command":"push","payload":{"aps":{}}}"#)
        let terminate = try command(#"{"command":"terminate"}"#)
        let reload = try command(#"{"command":"reload"}"#)
        let list = try command(#"{"command":"list"}"#)
        #expect(push.spec.grant.allows(.events) && list.spec.grant.allows(.events))
        #expect(!terminate.spec.grant.allows(.events) && !reload.spec.grant.allows(.events))
        #expect(terminate.spec.grant.allows(.all) && reload.spec.grant.allows(.all))
        #expect(!push.spec.grant.allows(nil))
        // The operating requests: `list --all` reads like `list`; the rest need "all".
        let listAll = try command(#"{"command":"list","all":true}"#)
        let stats = try command(#"{"command":"stats"}"#)
        let restart = try command(#"{"command":"service","action":"restart","service":"a.b"}"#)
        #expect(listAll.spec.grant.allows(.events))
        #expect(!stats.spec.grant.allows(.events) && !restart.spec.grant.allows(.events))
        #expect(stats.spec.grant.allows(.all) && restart.spec.grant.allows(.all))
    }

    @Test func theGrantIsReadFromTheConfiguration_andATypoIsNamed() throws {
        let configuration = try HostConfiguration.parse(
            #"{"services":{"a.b":{"requests":"events"}}}"#, file: "services.json")
        #expect(configuration.services["a.b"]?.requests == .events)
        #expect(throws: ConfigurationError.self) {
            try HostConfiguration.parse(#"{"services":{"a.b":{"requests":"everything"}}}"#, file: "services.json")
        }
    }
}
