// The lock (`Locked`, a pthread mutex) is declared once, in Locking, for the host and the SDK.
// Re-exported so the host's code and its tests name it as before.
@_exported import Locking
