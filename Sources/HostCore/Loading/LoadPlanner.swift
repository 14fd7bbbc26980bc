import ServiceJSON

/// What a load reads before it runs any plugin code: the configuration, every plugin file's
/// static metadata, and the start plan. The host's load and reload (``ServiceSet``) and
/// `host check` share it, so the dry run plans exactly what the host would.
///
/// Each step keeps its own outcome, so `host check` can report every problem while the host
/// stops at the first (configuration, then directories, then the start order).
public struct LoadPlanner {
    /// The configuration file read: `--config`, or the default file when it exists; nil for none.
    public var configurationPath: String?
    /// The configuration (empty without a file), or why the file cannot be used.
    public var configuration: Result<HostConfiguration, ConfigurationError>
    /// The plugin files inspected, or the first unusable directory.
    public var inspection: Result<PluginLoader.Inspection, PluginScanner.DirectoryError>
    /// The start plan; nil when the configuration or the inspection failed.
    public var plan: Result<StartPlan, StartOrderError>?
    /// The services of the plan's order that answer a request name a service before them
    /// answers: the host does not start them (`answer-conflict`). Empty without a plan.
    public var answerConflicts: [AnswerConflict] = []
    /// The configured services whose settings break their plugin's settings schema, each with
    /// the first rule broken: the host keeps the settings they had (or starts them with the
    /// schema's defaults), and `host check` reports them (`settings-invalid`).
    package var settingsViolations: [(service: String, violation: SettingsViolation)] = []

    /// Reads the configuration, inspects the directories and plans the start order of `settings`.
    /// Nonisolated: it runs no plugin code, and its closures would each be checked for the main
    /// actor at every call.
    public nonisolated init(_ settings: LoadSettings) {
        (configurationPath, configuration) = settings.configurationRead ?? Self.readConfiguration(settings)
        do throws(PluginScanner.DirectoryError) {
            inspection = .success(
                try PluginLoader.inspect(
                    directories: settings.directories, allowInsecure: settings.allowInsecure,
                    registry: settings.registry))
        } catch {
            inspection = .failure(error)
        }
        // Pins and signatures (issue 40): a file refused here is a failure like a corrupt one, before
        // any `dlopen`, for the loader and `host check` alike.
        if case .success(let configuration) = configuration, case .success(var checked) = inspection,
            PluginTrust.isActive(configuration)
        {
            PluginTrust.apply(configuration, to: &checked)
            inspection = .success(checked)
        }
        if case .success(let configuration) = configuration, case .success(let inspection) = inspection {
            // Appended in one array sized once: a `flatMap` of per-file `map`s made an array per plugin.
            var found: [FoundService] = []
            found.reserveCapacity(inspection.plugins.count)
            for plugin in inspection.plugins {
                for service in plugin.metadata.services { found.append(FoundService(service)) }
            }
            do throws(StartOrderError) {
                let computed = try StartPlan.compute(
                    found: found, configuration: configuration, onlyConfigured: settings.onlyConfigured)
                plan = .success(computed)
                answerConflicts = AnswerConflict.find(in: computed.order, plugins: inspection.plugins)
            } catch {
                plan = .failure(error)
            }
            // The files' services walked in place: `inspection.services` makes two arrays per file.
            for plugin in inspection.plugins {
                for service in plugin.metadata.services {
                    guard let schema = service.settingsSchema,
                        case .failure(let violation) = SettingsCheck.apply(
                            schema, to: configuration.services[service.id]?.settings)
                    else { continue }
                    settingsViolations.append((service.id, violation))
                }
            }
        }
    }

    /// Reads the configuration of `settings`: `--config`, or the default file when it exists
    /// (an empty configuration when it does not); the path read and the outcome.
    public static func readConfiguration(
        _ settings: LoadSettings
    ) -> (path: String?, configuration: Result<HostConfiguration, ConfigurationError>) {
        do throws(ConfigurationError) {
            if let given = settings.configurationPath {
                return (given, .success(try HostConfiguration.load(path: given, allowInsecure: settings.allowInsecure)))
            }
            if let standard = HostConfiguration.defaultPath(pluginDirectories: settings.directories),
                let found = try HostConfiguration.loadIfPresent(path: standard, allowInsecure: settings.allowInsecure)
            {
                return (standard, .success(found))
            }
            return (nil, .success(HostConfiguration()))
        } catch {
            // The default file exists (loadIfPresent threw), so it is the one that failed.
            return (
                settings.configurationPath ?? HostConfiguration.defaultPath(pluginDirectories: settings.directories),
                .failure(error)
            )
        }
    }

    /// The plan's order without the services of ``answerConflicts``: what the host starts.
    public var startOrder: [String]? {
        guard case .success(let plan)? = plan else { return nil }
        guard !answerConflicts.isEmpty else { return plan.order }
        let conflicting = Set(answerConflicts.map(\.service))
        return plan.order.filter { !conflicting.contains($0) }
    }

    /// The configured `policy: required` services no plugin provides: the host refuses to start.
    public var requiredButMissing: [String] {
        guard case .success(let configuration) = configuration, case .success(let plan)? = plan else { return [] }
        return plan.missing.filter { configuration.services[$0]?.policy == .required }
    }

    /// The configured `policy: required` services left out because a requirement their plugin
    /// declares is not met: the host refuses to start.
    public var requiredButUnmet: [UnmetRequirement] {
        guard case .success(let configuration) = configuration, case .success(let plan)? = plan else { return [] }
        return plan.unmet.filter { configuration.services[$0.service]?.policy == .required }
    }
}
