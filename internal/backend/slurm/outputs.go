package slurm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// maxOutput is the largest output parameter kept in the store.
const maxOutput = 256 << 10

// readBeneath reads name, a slash path relative to dir, never through a
// link out of dir and only if it is a regular file; it reads at most
// limit+1 bytes, so that a caller can tell a file over limit.
func readBeneath(dir, name string, limit int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

func readOutputs(dir string, names []string) (map[string]string, string) {
	if len(names) == 0 {
		return nil, ""
	}
	out := make(map[string]string, len(names))
	for _, name := range names {
		b, err := readBeneath(dir, path.Join(outputsDir, name), maxOutput)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Sprintf("output parameter %q was not written to $KILN_OUTPUTS/%s", name, name)
		case err != nil:
			return nil, fmt.Sprintf("output parameter %q cannot be read: %v", name, err)
		case len(b) > maxOutput:
			return nil, fmt.Sprintf("output parameter %q is over %d bytes, the most kept; write large data as an artifact", name, maxOutput)
		}
		out[name] = strings.TrimRight(string(b), "\n")
	}
	return out, ""
}

// missingArtifact names the first declared artifact that is not in dir.
func missingArtifact(dir string, paths []string) string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Sprintf("the attempt's directory cannot be read: %v", err)
	}
	defer root.Close()
	for _, p := range paths {
		_, err := root.Stat(path.Join(outputsDir, p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Sprintf("output artifact %q was not written to $KILN_OUTPUTS/%s", p, p)
		case err != nil:
			return fmt.Sprintf("output artifact %q cannot be read: %v", p, err)
		}
	}
	return ""
}
