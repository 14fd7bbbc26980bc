// Row 3's third reference (scripts/bench): bench-empty-swift importing Dispatch, to show what
// loading Dispatch's Swift overlay (libswiftDispatch) alone costs a Swift program at start:
// the host uses it (DispatchQueue, DispatchSource), the empty program it is measured against
// does not.
import Dispatch
import Glibc

let line = "info [bench-empty-dispatch] active with 0 service(s)\n"
_ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
// Never taken: a use of the overlay, so nothing can drop the library from the link.
if CommandLine.argc > 99 { DispatchQueue.main.async {} }
while true { pause() }
