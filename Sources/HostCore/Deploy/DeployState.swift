/// What the host keeps of deploys while it runs (``Host`` holds one): the settings it was
/// started with (the plugin directories a generation replaces) and the deploy in probation.
@MainActor
struct DeployState {
    /// A generation switched to and watched: any failure before `timer` fires rolls it back.
    struct Probation {
        let generation: Int
        /// The generation in force before (nil: the plugin directories): what a rollback runs.
        let previous: Int?
        /// How long it is watched, and when it started (the host clock's seconds).
        let seconds: Double
        let started: Double
        /// The folder the deploy was asked for (`deploy status` says it: who deployed it).
        let from: String
        let timer: ScheduledWork
        /// Told how it ends: the services that asked for it (extension deploy/1).
        var settled: [@MainActor (RequestReply) -> Void] = []
    }

    /// The start's `-p` directories and `--config`; nil until ``Host/resumingGeneration(_:)``.
    var startSettings: LoadSettings?
    /// The deploy being watched, if any.
    var probation: Probation?
    /// `--keep-generations`: generations kept after an acceptance besides the current one, the
    /// previous one and those a service's file comes from.
    var keepGenerations = DeployState.defaultKeepGenerations

    /// The default of `--keep-generations`.
    nonisolated static let defaultKeepGenerations = 3
}
