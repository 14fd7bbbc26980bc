/// The text of `host --help`.
public enum Usage {
    /// The help text, with a real example.
    public static let text = """
    host: run ServiceHost services loaded from plugin directories

    USAGE
      host --plugins DIR [--plugins DIR …] [options]
      host inspect [--json] PATH…
      host --help | --version

    RUN OPTIONS
      --plugins DIR             load every *.so in DIR, in name order (repeatable)
      --strict                  any plugin that fails to load stops the host (exit 2)
      --allow-insecure-plugins  load files or directories writable by others
                                or owned by another user
      --trace FILE              write one JSON line per event delivered to a service
      --log-level LEVEL         error, warn, info (default) or debug
      --shutdown-timeout SECS   how long SIGTERM's shutdown may take (default 5)
      --isolation MODE          in-process (default) or process: each plugin in a
                                worker process, restarted when it crashes
      --event-timeout SECS      every event's deadline (default 10); a worker that
                                misses it is killed and restarted
      --crash-limit N/SECS      crashes that mark a service failed (default 5/60)
      --safe-mode               start only trusted services (bundled ones, and
                                those the configuration marks "trusted": true)

    INSPECT
      host inspect PATH…        print each plugin's services, versions, ABI and
                                events from its static metadata, running no plugin code
      --json                    the same as a JSON array
      --state-dir DIR           show the services a crash loop marked failed there
                                (default: the host's state directory)

    EXIT STATUS
      0  clean exit (or every inspected file is a valid plugin)
      1  forced exit after a second signal or the shutdown timeout; an inspected
         file is not a valid plugin
      2  bad command line, unusable plugin directory, or a load failure with --strict

    EXAMPLE
      host --plugins ./lib --trace trace.jsonl
      host inspect ./lib/libLogger.so
    """
}
