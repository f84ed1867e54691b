package wire

import (
	"sync"

	"github.com/seed31a95821/informer/apiresource"
)

// defaultScheme is built once, on first use, and only ever read afterwards:
// building it walks hundreds of types by reflection, too slow to repeat for
// every ListerWatcher. It is never handed out, so nobody can mutate it.
var defaultScheme = sync.OnceValue(apiresource.NewScheme)
