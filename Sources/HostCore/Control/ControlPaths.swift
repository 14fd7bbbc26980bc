import Glibc

/// Where the control socket lives when `--control` is not given.
public enum ControlPaths {
    /// `$XDG_RUNTIME_DIR/servicehost/host.sock`, or `host.sock` in the state directory when
    /// `XDG_RUNTIME_DIR` is unset: `stateDirectory` when given, else the default one.
    public static func defaultSocket(
        stateDirectory: String? = nil,
        environment: (String) -> String? = { name in getenv(name).map { String(cString: $0) } }
    ) throws(StorageError) -> String {
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            return runtime + "/servicehost/host.sock"
        }
        if let stateDirectory { return stateDirectory + "/host.sock" }
        return try StateDirectory.defaultPath(environment: environment) + "/host.sock"
    }
}
