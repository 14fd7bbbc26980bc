import ServiceJSON

/// Settings schemas at work (issue 42 item 3): a configured service's `settings` checked
/// against the schema its plugin declares (`SH_CLAIM_SETTINGS_SCHEMA`, the manifest's
/// `settingsSchema`), its defaults filled in. The load and reload (``LoadPlanner``), `host
/// check` and `host ctl configure` all check through here.
enum SettingsCheck {
    /// `settings` against `schema` (nil: no schema, they pass as they are): with the defaults
    /// filled in, or the first rule they break, naming the key.
    static func apply(_ schema: SettingsSchema?, to settings: [String: JSONValue]?) -> Result<
        [String: JSONValue]?, SettingsViolation
    > {
        guard let schema else { return .success(settings) }
        switch schema.apply(to: settings.map(JSONValue.object)) {
        case .success(let value):
            guard let value else { return .success(nil) }
            guard case .object(let members) = value else {
                return .failure(SettingsViolation(key: "", reason: "must be an object"))
            }
            return .success(members)
        case .failure(let violation):
            return .failure(violation)
        }
    }
}

extension HostConfiguration {
    /// Checks the settings of every service of `services` that declares a schema: fills in its
    /// defaults, and for a value that breaks it keeps the settings `previous` gave the service
    /// (the configuration in force before a reload), or its defaults alone at the first load.
    /// Returns each refusal with what was kept (`previous` or `defaults`).
    mutating func applySettingsSchemas(
        of services: [(service: ServiceMetadata, plugin: PluginInspector.Inspected)], previous: HostConfiguration
    ) -> [(service: String, violation: SettingsViolation, kept: String)] {
        var refusals: [(service: String, violation: SettingsViolation, kept: String)] = []
        for found in services {
            guard let schema = found.service.settingsSchema else { continue }
            let id = found.service.id
            var entry = self.services[id] ?? ServiceConfiguration(id: id)
            switch SettingsCheck.apply(schema, to: entry.settings) {
            case .success(let filled):
                guard filled != entry.settings else { continue }
                entry.setSettings(filled)
            case .failure(let violation):
                if let kept = previous.services[id] {
                    entry.setSettings(kept.settings)
                    refusals.append((id, violation, "previous"))
                } else {
                    entry.setSettings(try? SettingsCheck.apply(schema, to: nil).get())
                    refusals.append((id, violation, "defaults"))
                }
            }
            self.services[id] = entry
        }
        return refusals
    }
}
