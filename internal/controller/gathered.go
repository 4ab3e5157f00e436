package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// gatheredDir is the directory of a group's output artifact name, as
// Argo gathers a loop's artifacts under one key: one entry per child that
// produced it, named by the child's index (zero-padded, so that names
// sort in item order), a link to the child's file or directory. It is
// made on first use from the group's gathered list of paths, in the
// group node's directory, under a name of its own for each list: a
// retried group that gathers again gets a new directory, and readers of
// the old one are not disturbed. Only backends whose outputs are on this
// machine have one.
func (in *inputs) gatheredDir(task, name string) (string, bool) {
	rs := in.rs
	up, ok := rs.plan.Index[task]
	if !ok || rs.nodes[up].status.Phase != apiv1.PhaseSucceeded || rs.nodes[up].status.Children == nil {
		return "", false
	}
	list, ok := rs.nodes[up].status.Outputs[name]
	host, here := backend.As[backend.HostOutputs](in.cfg.Backend)
	if !ok || !here {
		return "", false
	}
	var paths []*string
	if json.Unmarshal([]byte(list), &paths) != nil {
		return "", false
	}
	sum := sha256.Sum256([]byte(list))
	nodeDir := filepath.Dir(filepath.Dir(host.HostOutputDir(job.AttemptID{Run: string(rs.run.ID), Node: task, Number: 1})))
	dir := filepath.Join(nodeDir, "gathered", name+"-"+hex.EncodeToString(sum[:6]))
	if err := makeGathered(dir, paths); err != nil {
		in.cfg.Log.Warn("gathering a group's artifacts into a directory", "run", rs.run.ID, "task", task, "artifact", name, "err", err)
		return "", false
	}
	return dir, true
}

// makeGathered makes dir, holding a link to each path, unless it is
// there: it is made aside and renamed into place whole.
func makeGathered(dir string, paths []*string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".gathering-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	width := len(strconv.Itoa(max(len(paths)-1, 0)))
	for i, p := range paths {
		if p == nil {
			continue
		}
		if err := os.Symlink(*p, filepath.Join(tmp, fmt.Sprintf("%0*d", width, i))); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return nil // made meanwhile by another reader
		}
		return err
	}
	return nil
}
