// ServiceABI is a header-only contract; SwiftPM needs one source file per C target.
// Including the umbrella header here checks, every time the package builds, the layouts
// servicehost/layout.h pins (every runtime struct) and those below (the static metadata).
#include "servicehost.h"

_Static_assert(sizeof(sh_meta_header) == 16, "sh_meta_header layout");
_Static_assert(sizeof(sh_meta_plugin) == 72, "sh_meta_plugin layout");
_Static_assert(sizeof(sh_meta_service) == 264, "sh_meta_service layout");
_Static_assert(sizeof(sh_meta_claim) == 272, "sh_meta_claim layout");
