// Package slurmtest connects tests to the real Slurm cluster that make
// slurm-up starts, each test with a job name prefix and a shared
// directory of its own.
package slurmtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// FailingNode is the test cluster's node that a test takes down under a
// job: every other test's jobs avoid it (Exclude), so that no other test
// sees its job fail with the node.
const FailingNode = "kiln-3"

// Exclude is the sbatch argument that keeps a job off FailingNode.
const Exclude = "--exclude=" + FailingNode

// Cluster is the test cluster as one test uses it.
type Cluster struct {
	// Conf is the cluster's slurm.conf (SLURM_CONF).
	Conf string
	// Dir is the test's directory on the filesystem the nodes share (on
	// the test cluster, this machine's).
	Dir string
	// Prefix starts the names of the test's jobs, which are cancelled
	// when the test ends.
	Prefix string
}

// Connect finds the test cluster ($KILN_SLURM_CONF, else the
// repository's .slurm/slurm.conf) and checks that its controller
// answers. Without one the test is skipped, unless KILN_REQUIRE_SLURM=1
// (make test, CI) makes that a failure.
func Connect(t testing.TB) *Cluster {
	t.Helper()
	conf := os.Getenv("KILN_SLURM_CONF")
	if conf == "" {
		_, file, _, _ := runtime.Caller(0)
		conf = filepath.Join(filepath.Dir(file), "..", "..", ".slurm", "slurm.conf")
	}
	if err := probe(conf); err != nil {
		if os.Getenv("KILN_REQUIRE_SLURM") == "1" {
			t.Fatalf("the Slurm test cluster is required (KILN_REQUIRE_SLURM=1) but does not answer through %s: %v", conf, err)
		}
		t.Skipf("no Slurm test cluster (make slurm-up): %v", err)
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	c := &Cluster{Conf: conf, Dir: t.TempDir(), Prefix: "kilntest" + hex.EncodeToString(b)}
	t.Cleanup(func() { c.cancelAll() })
	return c
}

var probes sync.Map // conf -> func() error: each cluster is asked once per test binary

// probe reports whether the cluster of conf answers. Without the file it
// fails at once: the commands would otherwise look for a controller in
// DNS for a minute.
func probe(conf string) error {
	f, _ := probes.LoadOrStore(conf, sync.OnceValue(func() error {
		if _, err := os.Stat(conf); err != nil {
			return err
		}
		out, err := command(conf, "scontrol", "ping")
		if err != nil {
			return fmt.Errorf("scontrol ping: %w: %s", err, strings.TrimSpace(out))
		}
		if !strings.Contains(out, "UP") {
			return fmt.Errorf("scontrol ping: %s", strings.TrimSpace(out))
		}
		return nil
	}))
	return f.(func() error)()
}

// cancelAll cancels every job of the test's that still waits or runs.
func (c *Cluster) cancelAll() {
	out, err := command(c.Conf, "squeue", "-h", "--me", "-o", "%i|%j")
	if err != nil {
		return
	}
	var ids []string
	for line := range strings.Lines(out) {
		id, name, _ := strings.Cut(strings.TrimSpace(line), "|")
		if strings.HasPrefix(name, c.Prefix+".") {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		_, _ = command(c.Conf, "scancel", ids...)
	}
}

// Command runs a Slurm command on the cluster and returns its output.
func (c *Cluster) Command(name string, args ...string) (string, error) {
	return command(c.Conf, name, args...)
}

func command(conf, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
