// The baseline of row 3's fixed start-up cost (scripts/bench): an empty Swift program, built and
// linked like the host (release, dynamically against the same Swift runtime, no Foundation: the
// host imports none), that prints the line the runner waits for and waits to be killed (the
// runner reads its RSS first); with `--exit` it exits after the line.
import Glibc

let line = "info [bench-empty-swift] active with 0 service(s)\n"
_ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
// `--exit`: the baseline of `host --version`, which exits after its line.
if CommandLine.argc > 1 { exit(0) }
while true { pause() }
