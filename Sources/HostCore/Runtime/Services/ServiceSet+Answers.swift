extension ServiceSet {
    /// `order` without the services that answer a request name an earlier service in it
    /// answers already (`SH_CLAIM_ANSWER`: one answerer per name). Each one left out is logged
    /// as an error naming both services and the name, and listed as skipped.
    ///
    /// Rationale: the later one is not started rather than the whole host refused, so one bad
    /// plugin in a directory cannot stop the others; the earlier one keeps answering, exactly
    /// as it would have without the newcomer.
    func withoutSecondAnswerers(_ order: [String], inspection: PluginLoader.Inspection) -> [String] {
        // Only answerers matter: most services answer nothing, and every start plans every file.
        var answersOf: [String: [String]] = [:]
        for plugin in inspection.plugins {
            for service in plugin.metadata.services where !service.answers.isEmpty && answersOf[service.id] == nil {
                answersOf[service.id] = service.answers
            }
        }
        guard !answersOf.isEmpty else { return order }
        var answerer: [String: String] = [:]
        return order.filter { id in
            guard let answers = answersOf[id] else { return true }
            if let name = answers.first(where: { answerer[$0] != nil }), let first = answerer[name] {
                let message = "answers \(name), which \(first) answers already (one answerer per request name)"
                skipped.append(SkippedEntry(service: id, reason: .answerConflict, message: message))
                log.error(
                    "host", "\(id) is not started: it \(message)", event: .requestConflict, .string("service", id),
                    .string("name", name), .string("answerer", first))
                return false
            }
            for name in answers { answerer[name] = id }
            return true
        }
    }
}
