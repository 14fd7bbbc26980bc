/// The outcome of a background fetch, the answer to `didReceiveRemoteNotification`
/// (as UIBackgroundFetchResult, `SH_FETCH_*`).
///
/// The host merges every service's answer: new data wins over no data, which wins over
/// failed. Better results sort first, so the merge is the minimum.
public enum FetchResult: Int32, CaseIterable, Comparable, NamedCase {
    /// New data was downloaded (`SH_FETCH_NEW_DATA`).
    case newData = 0
    /// There was nothing new (`SH_FETCH_NO_DATA`).
    case noData = 1
    /// The fetch failed (`SH_FETCH_FAILED`).
    case failed = 2

    /// "newData", "noData" or "failed".
    public var name: String {
        switch self {
        case .newData: "newData"
        case .noData: "noData"
        case .failed: "failed"
        }
    }

    /// Whether `a` is the better result.
    public static func < (a: FetchResult, b: FetchResult) -> Bool { a.rawValue < b.rawValue }
}
