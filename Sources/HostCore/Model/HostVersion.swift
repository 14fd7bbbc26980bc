import Glibc

/// The host's version, as `host --version` prints it and plugins receive it.
public enum HostVersion {
    /// The release number.
    public static let number = "0.1.0"
    /// "servicehost 0.1.0".
    public static let string = "servicehost \(number)"

    // Never freed: plugins may keep sh_host.host_version for the process lifetime.
    // Immutable after initialization, so sharing it between threads is safe.
    nonisolated(unsafe) static let cString: UnsafePointer<CChar> = UnsafePointer(strdup(string)!)
}
