import Glibc

/// Where the control socket lives when `--control` is not given.
public enum ControlPaths {
    /// `$XDG_RUNTIME_DIR/servicehost/host.sock`, or `host.sock` in the state directory
    /// (`$XDG_STATE_HOME/servicehost`, else `~/.local/state/servicehost`) when the runtime
    /// directory is unset.
    public static func defaultSocket(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/servicehost/host.sock"
        }
        return defaultStateDirectory(environment: environment) + "/host.sock"
    }

    /// `$XDG_STATE_HOME/servicehost`, else `$HOME/.local/state/servicehost`.
    public static func defaultStateDirectory(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/servicehost" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? getpwuid(getuid()).map { String(cString: $0.pointee.pw_dir) } ?? "/tmp"
        return home + "/.local/state/servicehost"
    }

    /// The process environment as a dictionary.
    public static var environment: [String: String] {
        var result: [String: String] = [:]
        var entry = Glibc.environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }
}
