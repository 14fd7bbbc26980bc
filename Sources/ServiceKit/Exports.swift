// JSONValue is part of the SDK's surface (settings, payloads); it lives in its own small
// target so the host can parse JSON with the same code without ever linking ServiceKit.
@_exported import ServiceJSON
// So are the events and the enums mirrored from the C header (AppState, SceneState,
// LogLevel, FetchResult, PresentationOptions): declared once, for the host and the SDK.
@_exported import ServiceVocabulary

// The types ServiceKit declared itself before they moved, so `ServiceKit.AppState` and the
// like still compile in plugins written against earlier versions.
/// The application's state (``ServiceVocabulary/AppState``).
public typealias AppState = ServiceVocabulary.AppState
/// A scene's state (``ServiceVocabulary/SceneState``).
public typealias SceneState = ServiceVocabulary.SceneState
/// The severity of a log line (``ServiceVocabulary/LogLevel``).
public typealias LogLevel = ServiceVocabulary.LogLevel
/// The outcome of a background fetch (``ServiceVocabulary/FetchResult``).
public typealias FetchResult = ServiceVocabulary.FetchResult
/// How a notification is shown while the app is active (``ServiceVocabulary/PresentationOptions``).
public typealias PresentationOptions = ServiceVocabulary.PresentationOptions
/// Whether the app may present notifications (``ServiceVocabulary/AuthorizationStatus``).
public typealias AuthorizationStatus = ServiceVocabulary.AuthorizationStatus
/// What a service asks for in `requestAuthorization` (``ServiceVocabulary/AuthorizationOptions``).
public typealias AuthorizationOptions = ServiceVocabulary.AuthorizationOptions
