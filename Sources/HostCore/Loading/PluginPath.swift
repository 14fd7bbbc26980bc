import Glibc

/// Where the host looks for plugins when no `--plugins` is given, as GStreamer reads
/// `GST_PLUGIN_PATH` and CLAP hosts `CLAP_PATH`: `SERVICEHOST_PLUGIN_PATH` (directories
/// separated by colons), else `$XDG_DATA_HOME/servicehost/plugins` (by default
/// `~/.local/share/servicehost/plugins`).
public enum PluginPath {
    /// The variable read.
    public static let variable = "SERVICEHOST_PLUGIN_PATH"

    /// The default directories and where they came from ("SERVICEHOST_PLUGIN_PATH" or
    /// "XDG_DATA_HOME"); nil when neither gives one.
    public static func defaults(_ environment: (String) -> String? = { getenv($0).map { String(cString: $0) } })
        -> (directories: [String], source: String)?
    {
        if let path = environment(variable) {
            let directories = path.split(separator: ":").map(String.init)
            if !directories.isEmpty { return (directories, variable) }
        }
        if let data = environment("XDG_DATA_HOME"), data.hasPrefix("/") {
            return ([data + "/servicehost/plugins"], "XDG_DATA_HOME")
        }
        if let home = environment("HOME"), !home.isEmpty {
            return ([home + "/.local/share/servicehost/plugins"], "XDG_DATA_HOME")
        }
        return nil
    }

    /// One line for `--help` and `host check`: which directories the defaults are now.
    public static var summary: String {
        guard let (directories, source) = defaults() else { return "none (set \(variable) or HOME)" }
        return directories.joined(separator: ":") + " (from \(source == variable ? variable : "$XDG_DATA_HOME"))"
    }
}
