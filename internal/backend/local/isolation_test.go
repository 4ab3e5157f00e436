package local

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReachablePathDropsWhatOthersCannotSearch(t *testing.T) {
	t.Parallel()
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(private, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	kept, dropped := ReachablePath(strings.Join([]string{bin, "/usr/bin", "", "/no/such/dir", "/bin"}, ":"))
	if !slices.Equal(kept, []string{"/usr/bin", "/bin"}) || !slices.Equal(dropped, []string{bin, "", "/no/such/dir"}) {
		t.Errorf("kept %v, dropped %v", kept, dropped)
	}
}

func TestChooseIsolationRefusesWhatCannotBeHad(t *testing.T) {
	t.Parallel()
	if _, _, err := ChooseIsolation("bogus"); err == nil || !strings.Contains(err.Error(), "KLN-4002") {
		t.Errorf("ChooseIsolation(bogus) = %v, want KLN-4002", err)
	}
	mode, why, err := ChooseIsolation(IsolateAuto)
	switch {
	case err != nil:
		t.Fatal(err)
	case os.Geteuid() == 0 && mode != IsolateUsers:
		t.Errorf("auto as root chose %s (%s), want users", mode, why)
	case os.Geteuid() != 0 && LandlockABI() > 0 && mode != IsolateLandlock:
		t.Errorf("auto chose %s (%s), want landlock", mode, why)
	}
	if os.Geteuid() != 0 {
		if _, _, err := ChooseIsolation(IsolateUsers); err == nil || !strings.Contains(err.Error(), "KLN-6010") {
			t.Errorf("users without root = %v, want KLN-6010", err)
		}
	}
}
