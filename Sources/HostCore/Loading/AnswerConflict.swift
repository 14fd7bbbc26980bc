/// A service left out of the start order because a service before it answers a request name
/// it answers too (`SH_CLAIM_ANSWER`: one answerer per name).
///
/// Rationale: the later one is not started rather than the whole host refused, so one bad
/// plugin in a directory cannot stop the others; the earlier one keeps answering, exactly as it
/// would have without the newcomer.
public struct AnswerConflict: Sendable, Equatable, CustomStringConvertible {
    /// The service left out.
    public var service: String
    /// The request name both answer.
    public var name: String
    /// The service before it in start order that answers the name.
    public var answerer: String

    /// `answers geo.locate, which com.example.geo answers already (one answerer per request name)`.
    public var description: String {
        "answers \(name), which \(answerer) answers already (one answerer per request name)"
    }

    /// The conflicts of `order` (a start order of services `plugins` declare), in that order.
    /// The host's load and `host check` both ask this, so they leave out the same services.
    static func find(in order: [String], plugins: [PluginInspector.Inspected]) -> [AnswerConflict] {
        // Only answerers matter: most services answer nothing, and every start plans every file.
        var answersOf: [String: [String]] = [:]
        for plugin in plugins {
            for service in plugin.metadata.services where !service.answers.isEmpty && answersOf[service.id] == nil {
                answersOf[service.id] = service.answers
            }
        }
        guard !answersOf.isEmpty else { return [] }
        var answerer: [String: String] = [:]
        var conflicts: [AnswerConflict] = []
        for id in order {
            guard let answers = answersOf[id] else { continue }
            if let name = answers.first(where: { answerer[$0] != nil }), let first = answerer[name] {
                conflicts.append(AnswerConflict(service: id, name: name, answerer: first))
                continue
            }
            for name in answers { answerer[name] = id }
        }
        return conflicts
    }
}
