import ServiceJSON

/// The member names of the control protocol, each written once. ``ControlCommands`` and
/// ``ControlReply`` encode and decode through these, so the host, its snapshot and `host ctl`
/// cannot disagree on a spelling.
enum ControlKey: String {
    // Requests.
    case id, command, payload, tap, action, url, type, userInfo, hex, message, name, role, urls, activities
    case shortcut
    // Every reply.
    case ok, error, snapshot
    // `state`: `busy` and `stuck` are objects of `service`, `event`, `seconds`, `deadline`.
    case state, services, deviceToken, busy, stuck, service, event, seconds, deadline
    // `list`: one object per service.
    case version, path, priority, events, subscriptions, sceneRoles, lastError, retiredCopies, stuckIn, failure
    case activation, activatedBy, health
    // `reload`.
    case added, removed, replaced, failures, reconfigured, restartNeeded
    // Event replies.
    case handled, receivers, handledBy, answers, result, presentation, note
    // Scene replies.
    case scene, scenes, deliveries, configuration, configuredBy, settings, savedState, savedScenes
    // `authorization`: the request's `status`; the reply's `authorization` object of `status` and `allowed`.
    case authorization, status, allowed
    // Operating the host (ControlCommands+Operate).
    case all, force, logs, stats, blame, skipped, restarted, reset, watching
    // `deploy`.
    case directory, generation, kept, deploy, to, rolledBack
    // `deploy` `verify` (a fleet bundle, issue 41).
    case bundle, size, sha256, signature, digests
}

extension Dictionary where Key == String, Value == JSONValue {
    /// The member named `key`.
    subscript(key: ControlKey) -> JSONValue? {
        get { self[key.rawValue] }
        set { self[key.rawValue] = newValue }
    }
}

extension JSONValue {
    /// The member named `key` when this is an object.
    subscript(key: ControlKey) -> JSONValue? { self[key.rawValue] }
}
