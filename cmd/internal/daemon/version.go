package daemon

import "github.com/mnemo-dev/mnemo/rpc"

// Version is Mnemo's version: mnemo's, its daemon's and the store's. It is
// set at build time with -ldflags "-X
// github.com/mnemo-dev/mnemo/cmd/internal/daemon.Version=…" (`just
// install`, `just release`); a build of `go install …@v0.2.0` goes by its
// module's version (rpc.ReleaseVersion). A development build never hands a
// daemon over nor is refused by one (rpc.CompareVersions).
var Version = "0.1.0-dev"

func init() { Version = rpc.ReleaseVersion(Version) }
