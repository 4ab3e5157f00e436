package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// prepareFile makes sure path holds a store before SQLite opens it. A
// missing file is created whole, under another name, and linked into place,
// so that a store file never exists half made: an existing file that is
// empty was emptied, and is refused, never taken for a new store. The file
// is readable by its owner alone.
func prepareFile(ctx context.Context, path string, opt Options) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return create(ctx, path, opt)
	case err != nil:
		return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: path, Message: "opening the store: " + err.Error()}
	case !fi.Mode().IsRegular():
		return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: path, Message: "the store is not a regular file"}
	case fi.Size() == 0:
		return &apiv1.Error{
			Code: apiv1.CodeStoreCorrupt, File: path,
			Message: "the store file is empty: it was truncated after kiln made it (kiln never leaves an empty store); kiln will not start a new store over it",
		}
	}
	return restrict(path)
}

// create makes a new store at path.
func create(ctx context.Context, path string, opt Options) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kiln-store-*")
	if err != nil {
		return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: path, Message: "creating the store: " + err.Error()}
	}
	name := tmp.Name()
	tmp.Close()
	defer func() {
		for _, p := range []string{name, name + "-wal", name + "-shm"} {
			_ = os.Remove(p)
		}
	}()
	// Closing must copy the WAL into the file before it is linked into
	// place: the WAL is not linked with it. Only the schema is made here:
	// readers, statements and the secret key wait for the store's opener.
	s, _, err := openWriter(ctx, name, opt)
	if err != nil {
		return err
	}
	if err := s.wdb.Close(); err != nil {
		return openError(path, err)
	}
	if err := os.Link(name, path); err != nil && !errors.Is(err, fs.ErrExist) { // another process made it first
		return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: path, Message: "creating the store: " + err.Error()}
	}
	return nil
}

// restrict makes the store's files readable by their owner alone: they
// hold every run's records, and tokens' hashes. Files owned by another
// user are left as they are.
func restrict(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil && !errors.Is(err, fs.ErrPermission) {
			return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: p, Message: fmt.Sprintf("making the store private: %v", err)}
		}
	}
	return nil
}
