// Package buildinfo says which kiln this is: its version, the commit it
// was built from and the Go that built it, as the Go toolchain recorded
// them in the binary.
package buildinfo

import (
	"runtime"
	"runtime/debug"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// version is the release's version, stamped by make release
// (-ldflags "-X kiln.dev/kiln/internal/buildinfo.version=v1.2.3"); when
// set it wins over the module version the toolchain recorded, which is
// "(devel)" for a build of a checkout.
var version string

// Read returns this binary's build.
func Read() apiv1.Version {
	in := apiv1.Version{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if ok && bi.Main.Version != "" {
		in.Version = bi.Main.Version
	}
	if version != "" {
		in.Version = version
	}
	if !ok {
		return in
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		case "vcs.time":
			in.Time = s.Value
		}
	}
	return in
}

// Line is a build on one line: "kiln (devel) commit 1a2b3c4d5e6f
// (modified), go1.26.8 linux/amd64".
func Line(in apiv1.Version) string {
	s := "kiln " + in.Version
	if in.Commit != "" {
		c := in.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " commit " + c
		if in.Modified {
			s += " (modified)"
		}
	}
	return s + ", " + in.Go + " " + in.Platform
}
