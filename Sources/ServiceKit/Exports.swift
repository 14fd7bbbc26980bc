// JSONValue is part of the SDK's surface (settings, payloads); it lives in its own small
// target so the host can parse JSON with the same code without ever linking ServiceKit.
@_exported import ServiceJSON
