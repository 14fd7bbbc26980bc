// Fuzz target `config`: a services.json file's bytes through HostConfiguration.parse (the
// JSON parser, then ConfigurationReader), then every configuration the reader accepts through
// StartPlan.compute, against a fixed set of found services plus some of the configured ones:
// the plan must be an order that keeps every edge, or an error naming what is wrong.
@testable import HostCore

/// Services with claims among themselves: a requirement met, one missing, one whose installed
/// version is not a semantic version, an `after`.
let fixedFound: [FoundService] = [
    found("dev.fuzz.a", "1.0.0", requires: ["dev.fuzz.b >=1.0.0"]),
    found("dev.fuzz.b", "2.0.0", after: ["dev.fuzz.c"]),
    found("dev.fuzz.c", "1.5.0", requires: ["dev.fuzz.absent"]),
    found("dev.fuzz.d", "not-a-version"),
    found("dev.fuzz.e", "1.0.0", requires: ["dev.fuzz.d >=1"]),
]

func found(_ id: String, _ version: String, requires: [String] = [], after: [String] = []) -> FoundService {
    // The claims are literals above: a claim that does not parse is a mistake in this file.
    FoundService(
        id: id, priority: 0, version: version, requires: requires.map { try! ServiceRequirement(claim: $0) },
        after: after)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let configuration: HostConfiguration
    do {
        configuration = try HostConfiguration.parse(bytes: bytes, file: "services.json")
    } catch {
        // An error names the file: the one promise every refusal keeps.
        guard "\(error)".contains("services.json") else { fatalError("an error without the file name: \(error)") }
        return 0
    }
    // Every id the reader accepted is a valid service id.
    for id in configuration.services.keys where ServiceID.problem(with: id) != nil { fatalError("accepted id \(id)") }
    // Some configured services are installed (those with an even id length), so a configuration's
    // requires and after make edges and some of its services are missing.
    let installed = configuration.services.keys.sorted().filter { $0.utf8.count % 2 == 0 }.map {
        FoundService(id: $0, priority: 0)
    }
    let found = fixedFound + installed
    for onlyConfigured in [false, true] {
        checkPlan(found: found, configuration: configuration, onlyConfigured: onlyConfigured)
    }
    return 0
}

/// Computes the plan twice and checks what the plan promises.
func checkPlan(found: [FoundService], configuration: HostConfiguration, onlyConfigured: Bool) {
    let first = Result { () throws(StartOrderError) in
        try StartPlan.compute(found: found, configuration: configuration, onlyConfigured: onlyConfigured)
    }
    let again = Result { () throws(StartOrderError) in
        try StartPlan.compute(found: found, configuration: configuration, onlyConfigured: onlyConfigured)
    }
    guard first == again else { fatalError("the plan is not a pure function: \(first) then \(again)") }
    let plan: StartPlan
    switch first {
    case .failure(let error):
        if case .cycle(let ids, let origins) = error.code {
            guard ids.count >= 2, ids.first == ids.last, origins.count == ids.count - 1 else {
                fatalError("malformed cycle \(error)")
            }
        }
        return
    case .success(let value): plan = value
    }
    let foundIDs = Set(found.map(\.id))
    var position: [String: Int] = [:]
    for (index, id) in plan.order.enumerated() {
        guard foundIDs.contains(id) else { fatalError("\(id) is started but was not found") }
        guard position.updateValue(index, forKey: id) == nil else { fatalError("\(id) is started twice") }
    }
    let leftOut = plan.disabled + plan.notConfigured + plan.unmet.map(\.service)
    for id in leftOut where position[id] != nil { fatalError("\(id) is left out and started") }
    for id in plan.missing where foundIDs.contains(id) { fatalError("\(id) is missing but was found") }
    // Every edge between two started services is kept: the configuration's and the plugins'.
    func precedes(_ before: String, _ after: String) {
        if let early = position[before], let late = position[after], early >= late {
            fatalError("\(after) starts before \(before), which it depends on")
        }
    }
    for (id, requirements) in plan.requirements {
        guard position[id] != nil else { fatalError("requirements of \(id), which is not started") }
        for requirement in requirements {
            guard position[requirement] != nil else { fatalError("\(id) starts without \(requirement)") }
            precedes(requirement, id)
        }
    }
    for entry in configuration.services.values {
        for other in entry.requires + entry.after { precedes(other, entry.id) }
    }
    for service in found { for other in service.requires.map(\.id) + service.after { precedes(other, service.id) } }
}
