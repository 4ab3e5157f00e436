package buildinfo

import (
	"strings"
	"testing"
)

// TestStampedVersionWins: make release's -X version is the version Read
// and Line report, over the module's.
func TestStampedVersionWins(t *testing.T) {
	if got := Read().Version; got == "" {
		t.Fatal("Read gives no version")
	}
	old := version
	t.Cleanup(func() { version = old })
	version = "v1.2.3"
	in := Read()
	if in.Version != "v1.2.3" || !strings.HasPrefix(Line(in), "kiln v1.2.3") {
		t.Errorf("with version stamped v1.2.3: Read %+v, Line %q", in, Line(in))
	}
}
