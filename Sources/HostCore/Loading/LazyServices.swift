/// Which services a start leaves dormant until their first event, decided once for the host's
/// load and `host check`: lazy by their metadata or the configuration's `activation`, and able
/// to be woken.
struct LazyServices {
    /// Why a service asked to be lazy is opened at start all the same.
    enum Refusal: Equatable {
        /// It handles only lifecycle events, which never open a lazy service.
        case lifecycleOnly(service: String)
        /// An eager service (`requiredBy`) requires it, so it must be running.
        case required(service: String, requiredBy: String)
    }

    /// The services left dormant.
    var lazy: Set<String> = []
    /// The services asked lazy but opened at start, in the order the host logs them.
    var refusals: [Refusal] = []

    /// The lazy services of `wanted` among `plugins`, under `configuration`, for `plan` (whose
    /// order is the start order and whose requirements say what each service needs running).
    init(
        plan: StartPlan, plugins: [PluginInspector.Inspected], configuration: HostConfiguration, wanted: WantedServices
    ) {
        // `wanted` is asked only of lazy services: most sets have none, and then no id is hashed here.
        for plugin in plugins {
            for service in plugin.metadata.services {
                let activation = configuration.service(service.id)?.activation ?? (service.lazy ? .lazy : .eager)
                guard activation == .lazy, wanted.contains(service.id) else { continue }
                guard service.canBeWoken else {
                    refusals.append(.lifecycleOnly(service: service.id))
                    continue
                }
                lazy.insert(service.id)
            }
        }
        // Dependents before their requirements (the plan is in start order): an eager service
        // needs what it requires running, so that is opened at start.
        guard !lazy.isEmpty, !plan.requirements.isEmpty else { return }
        for id in plan.order.reversed() where !lazy.contains(id) {
            for required in plan.requirements[id] ?? [] where lazy.remove(required) != nil {
                refusals.append(.required(service: required, requiredBy: id))
            }
        }
    }
}
