import Glibc

/// The steps of a deploy, each said in one `deploy.step` line as it starts, so a host killed
/// at any of them can be matched with what its next start runs (issue 40 item 4).
enum DeployStep: String, Sendable, CaseIterable {
    /// Copying the set into `generations/staging-N` (said with its first file copied).
    case staging
    /// Checking the staged set with the planner the host loads with.
    case verifying
    /// Reloading onto the verified generation.
    case switching
    /// Switched; watched until its probation ends.
    case probation
    /// The probation ended well: recording the generation as current.
    case accepting
    /// A failure, a cancel or `ctl rollback`: going back to the previous generation.
    case rollingBack

    /// `SERVICEHOST_DEPLOY_HALT_AT=POINT`: where the host kills itself (SIGKILL), for the tests
    /// that check what a start runs after a `kill -9` there. POINT is a step (once its
    /// `deploy.step` line is written) or ``currentRecorded``. Unset (always, outside those
    /// tests): nothing happens.
    static let haltAt: String? = getenv("SERVICEHOST_DEPLOY_HALT_AT").map { String(cString: $0) }

    /// The point between the two writes of an acceptance: `generations/current` names the new
    /// generation, its `applied` history line is not written yet.
    static let currentRecorded = "currentRecorded"

    /// Kills the host when ``haltAt`` names `point`.
    static func halt(at point: String) {
        if haltAt == point { raise(SIGKILL) }
    }
}
