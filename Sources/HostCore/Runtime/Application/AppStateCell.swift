import Synchronization

/// The app state, readable from any thread (`sh_host.app_state` is thread-safe).
final class AppStateCell: Sendable {
    private let raw = Atomic<Int32>(AppState.notRunning.rawValue)

    var value: AppState {
        get { AppState(rawValue: raw.load(ordering: .acquiring)) ?? .notRunning }
        set { raw.store(newValue.rawValue, ordering: .releasing) }
    }
}
