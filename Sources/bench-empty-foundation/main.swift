// Row 3's second reference (scripts/bench): bench-empty-swift importing Foundation, to show what
// linking Foundation alone costs a Swift program at start (the host does not link it).
import Foundation

FileHandle.standardError.write(Data("info [bench-empty-foundation] active with 0 service(s)\n".utf8))
while true { pause() }
