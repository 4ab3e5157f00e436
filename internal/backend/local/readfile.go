package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

var _ backend.FileReader = (*Backend)(nil)

// ReadFile implements backend.FileReader. The file is read beneath the
// attempt's directory, as outputs are (outputs/ itself cannot be a link
// away): never through a link out of it, never from a pipe or a device
// the task left there.
func (b *Backend) ReadFile(_ context.Context, id job.AttemptID, name string, limit int64) ([]byte, error) {
	dir, err := attemptDir(b.cfg.Home, id.String())
	if err != nil {
		return nil, err
	}
	// Most reads are of a file the task never wrote (a progress report
	// read as the attempt ends): one stat says so, where the safe open
	// below takes a dozen calls. A link planted on the way can only make
	// it say "missing" for a file that is there, never read elsewhere.
	if _, err := os.Lstat(filepath.Join(dir, outputsDir, name)); errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	data, err := readRegular(dir, path.Join(outputsDir, name), limit)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s of attempt %s is over %d bytes", name, id, limit)
	}
	return data, nil
}
