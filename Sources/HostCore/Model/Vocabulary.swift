// The events and the enums mirrored from the C header are declared once, in
// ServiceVocabulary, which ServiceKit and servicehost-metagen read too. Re-exported so the
// host's code and its users name them as before (EventKind, AppState, SceneState, …).
@_exported import ServiceVocabulary
