package v1alpha1

// Version is a kiln build, as kiln version prints it and GET
// /api/v1/version answers.
type Version struct {
	// Version is the module version, "(devel)" for a build from a checkout.
	Version string `json:"version"`
	// Commit is the VCS revision built, with Modified set when the tree
	// had uncommitted changes; empty when the build did not record one.
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Time is the commit's time (RFC 3339), when recorded.
	Time string `json:"time,omitempty"`
	// Go is the Go version that built it; Platform is GOOS/GOARCH.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}
