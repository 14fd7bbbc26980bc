/// The worker protocol: how the host and a worker process talk over their socketpair.
///
/// Every message is one frame: a 16-byte header, then `length` bytes of payload. All
/// integers are little-endian (the only byte order ServiceHost runs on).
///
/// ```text
/// offset  size  field
///      0     4  magic     "SHWP" (0x50574853)
///      4     2  version   the protocol version, 1
///      6     2  type      a FrameType
///      8     4  sequence  pairs a request with its reply (0 for one-way frames)
///     12     4  length    payload bytes that follow, at most Wire.maxPayload
/// ```
///
/// Rationale: both ends are the same `host` binary, yet the version is checked on every frame
/// and in the worker's first frame (`hello`), so a worker left from an upgraded binary is
/// refused with a reason rather than misread.
enum Wire {
    /// "SHWP" read as a little-endian integer.
    static let magic: UInt32 = 0x5057_4853
    /// The protocol version this host speaks (and the only one, for now).
    static let version: UInt16 = 1
    /// The header's size in bytes.
    static let headerSize = 16
    /// The largest payload either side accepts: a store value (1 MiB), a key list, a payload.
    static let maxPayload = 16 << 20
}

/// What a frame carries. The numbers are part of the protocol: never reuse one.
enum FrameType: UInt16, Sendable {
    // Host → worker.
    /// Load a plugin: path, file identity, log level, answer timeout. Answer: opened / openFailed.
    case open = 1
    /// Call one service's `attach`. Answer: attached.
    case attach = 2
    /// Deliver one event to one service (EventCodec). Answer: result.
    case event = 3
    /// The answer to a worker's `call`.
    case reply = 4
    /// The reply to a worker's `request`: request id, result, JSON. One-way.
    case requestReply = 5
    /// A background task's time is up (background-tasks/1): service index, task id. One-way;
    /// the worker runs the task's expiration handler (WorkerTasks).
    case taskExpired = 6

    // Worker → host.
    /// The worker's first frame: its protocol version and pid.
    case hello = 16
    /// The worker is about to run plugin code: 1 dlopen (ELF constructors), 2 servicehost_entry.
    case stage = 17
    /// The plugin loaded: its service ids, in the order the plugin answered them.
    case opened = 18
    /// The plugin did not load: the loader's reason (LoadFailureCodec).
    case openFailed = 19
    /// `attach` returned: its result.
    case attached = 20
    /// `handle_event` returned: its result.
    case result = 21
    /// A completion was called: completion id, result, JSON answer.
    case complete = 22
    /// `sh_host.log`: service, level, message.
    case log = 23
    /// `sh_host.post`: service, name, JSON payload.
    case post = 24
    /// `sh_host.subscribe`: service, name.
    case subscribe = 25
    /// `sh_host.register_for_remote_notifications`: service.
    case registerForRemoteNotifications = 26
    /// A host function with an answer (HostCall): the host replies with `reply`.
    case call = 27
    /// `sh_host.request`: service, request id, name, JSON payload. The host answers later
    /// with `requestReply`.
    case request = 28
    /// The health extension's `report`: service, i32 status, optional reason. One-way.
    case reportHealth = 29
    /// Extension deploy/1 `deploy`: service, request id, directory, probation in ms. The host
    /// answers later with `requestReply` (the outcome and its JSON).
    case deploy = 30
}

/// The numbers of the host functions a worker forwards and waits for (frame type `call`);
/// HostCallFrame writes and reads their arguments.
enum HostCall: UInt8, Sendable {
    /// `sh_host.app_state`. Reply: i32.
    case appState = 1
    /// `sh_host.unsubscribe`: name. Reply: i32.
    case unsubscribe = 2
    /// `sh_host.store_get`: key, capacity. Reply: i32 result, u64 length, bytes.
    case storeGet = 3
    /// `sh_host.store_set`: key, value. Reply: i32.
    case storeSet = 4
    /// `sh_host.store_remove`: key. Reply: i32.
    case storeRemove = 5
    /// `sh_host.store_keys`. Reply: i32 result, u32 count, keys.
    case storeKeys = 6
    /// `sh_host.notification_settings`. Reply: i32 status, u32 allowed.
    case notificationSettings = 7
    /// `sh_host.request_authorization`: u32 options. Reply: i32.
    case requestAuthorization = 8
    /// `sh_host.set_scene_restoration`: u64 scene id, optional JSON. Reply: i32.
    case setSceneRestoration = 9
    /// Extension background-tasks/1 `begin`: blob name. Reply: i32, the task id's bits (0: none).
    case beginBackgroundTask = 10
    /// Extension background-tasks/1 `end`: u32 task. Reply: i32.
    case endBackgroundTask = 11
    /// notifications/1 `set_categories`: JSON. Reply: i32.
    case setNotificationCategories = 12

    /// Whether the ABI says [main-thread]: the host runs these on its main thread.
    var needsMainThread: Bool {
        switch self {
        case .appState, .unsubscribe, .notificationSettings, .requestAuthorization: false
        case .storeGet, .storeSet, .storeRemove, .storeKeys, .setSceneRestoration, .beginBackgroundTask,
            .endBackgroundTask, .setNotificationCategories:
            true
        }
    }
}

/// One decoded frame.
struct Frame: Sendable {
    let type: FrameType
    let sequence: UInt32
    let payload: [UInt8]

    /// A reader over the payload.
    var reader: WireReader { WireReader(payload) }
}
