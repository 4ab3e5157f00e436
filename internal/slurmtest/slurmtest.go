// Package slurmtest connects tests to the real Slurm cluster that make
// slurm-up starts, each test with a job name prefix and a shared
// directory of its own.
package slurmtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

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
	if out, err := command(conf, "scontrol", "ping"); err != nil || !strings.Contains(out, "UP") {
		if os.Getenv("KILN_REQUIRE_SLURM") == "1" {
			t.Fatalf("the Slurm test cluster is required (KILN_REQUIRE_SLURM=1) but does not answer through %s: %v %s", conf, err, out)
		}
		t.Skipf("no Slurm test cluster (make slurm-up): %v %s", err, out)
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	c := &Cluster{Conf: conf, Dir: t.TempDir(), Prefix: "kilntest" + hex.EncodeToString(b)}
	t.Cleanup(func() { c.cancelAll() })
	return c
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
