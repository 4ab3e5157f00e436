package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every path of the repository that a comment of the deploy manifests
// names (deploy/kubernetes/components/volcano, say) is there.
func TestDeployCommentsNamePathsThatExist(t *testing.T) {
	t.Parallel()
	// a path of the repository, not a kubectl object such as deploy/kiln
	named := regexp.MustCompile(`(?:^|[\s(])(deploy/[a-z]+/[A-Za-z0-9_./-]*[A-Za-z0-9_-])`)
	err := filepath.WalkDir("../../deploy", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			_, comment, ok := strings.Cut(line, "#")
			if !ok {
				continue
			}
			for _, m := range named.FindAllStringSubmatch(comment, -1) {
				p := m[1]
				if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
					t.Errorf("%s names %s, which is not there", path, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
