// JSONValue is part of the SDK's surface (settings, payloads); it lives in its own small
// target so the host can parse JSON with the same code without ever linking ServiceKit.
@_exported import ServiceJSON
// So are the events and the enums mirrored from the C header (AppState, SceneState,
// LogLevel, FetchResult, PresentationOptions): declared once, for the host and the SDK.
@_exported import ServiceVocabulary
