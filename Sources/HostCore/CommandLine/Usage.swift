/// The text of `host --help`.
public enum Usage {
    /// The help text, with a real example.
    public static let text = """
    host: run ServiceHost services loaded from plugin directories

    USAGE
      host --plugins DIR [--plugins DIR …] [options]
      host ctl [--control PATH] [--json] COMMAND …
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
      --control PATH            the control socket (default
                                $XDG_RUNTIME_DIR/servicehost/host.sock)
      --config FILE             services.json: order, settings, policies (default:
                                services.json in the first plugin directory)
      --only-configured         start only the services the configuration lists
      --state-dir DIR           stores, first-launch marks, crash records (default
                                $XDG_STATE_HOME/servicehost)
      --first-launch MODE       auto (default), always or never
      --fetch-timeout SECS      how long completions may take (default 30)
      --max-payload BYTES       the largest payload of a control request (default 65536)
      --launch-notification FILE, --launch-url URL, --launch-activity TYPE[,URL]
                                cold launch: in the launch options, then delivered once
      --launch-scene NAME[:ROLE]
                                connect this scene at launch
      --isolation MODE          in-process (default) or process: each plugin in a
                                worker process, restarted when it crashes
      --event-timeout SECS      every event's deadline (default 10); a worker that
                                misses it is killed and restarted
      --crash-limit N/SECS      crashes that mark a service failed (default 5/60)
      --safe-mode               start only trusted services (bundled ones, and
                                those the configuration marks "trusted": true)

    CONTROL (a running host)
      host ctl state | list | reload
      host ctl activate | resign | background | foreground | terminate | memory-warning
      host ctl push [--tap [ACTION]] FILE|-
      host ctl open URL
      host ctl activity TYPE [--url URL] [--user-info JSON]
      host ctl token HEX | token-error MESSAGE
      host ctl post NAME [JSON]
      host ctl scene connect|activate|resign|background|foreground|disconnect NAME …
      exit status: 0 handled, 1 error, 2 bad arguments, 3 delivered but not handled

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
      2  bad command line, configuration or directory; a load failure with --strict
         or of a required service; another host already on the control socket

    EXAMPLE
      host --plugins ./lib --trace trace.jsonl
      host ctl open myapp://item/42
      host inspect ./lib/libLogger.so
    """
}
