package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// requireMemoryCgroups skips the test where the supervisor can make no
// memory cgroup (not root, no delegation), or fails it when
// KILN_REQUIRE_CGROUPS=1.
func requireMemoryCgroups(t *testing.T, home string) memoryCgroups {
	t.Helper()
	m := findMemoryCgroups(home)
	if m.dir == "" {
		if os.Getenv("KILN_REQUIRE_CGROUPS") == "1" {
			t.Fatal("KILN_REQUIRE_CGROUPS=1 but no memory cgroup can be made here")
		}
		t.Skip("no memory cgroup can be made here (run as root on a machine with a writable memory controller)")
	}
	return m
}

// launchCapped starts cmd as attempt id with memory capped at limit bytes.
func (h *harness) launchCapped(t *testing.T, id string, limit int64, cmd ...string) *job.Spec {
	t.Helper()
	spec := &job.Spec{ID: mustID(t, id), Processes: []job.Process{{Command: cmd, Env: os.Environ()}}}
	spec.Container.Memory = limit
	if err := h.b.Launch(t.Context(), spec); err != nil {
		t.Fatalf("Launch(%s): %v", id, err)
	}
	return spec
}

// A process that outgrows the memory its task declared is killed by the
// kernel and reported OOMKilled, the task's failure, also when a shell it
// ran was the one killed; the cgroup is gone after.
func TestOOMKillIsReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m := requireMemoryCgroups(t, h.home)
	const limit = 32 << 20
	grow := "b = bytearray(512 << 20)"
	for _, tc := range []struct {
		id  string
		cmd []string
	}{
		{"r/oom/1", []string{"/usr/bin/python3", "-c", grow}},
		{"r/oom-shell/1", []string{"sh", "-c", "/usr/bin/python3 -c '" + grow + "'; exit $?"}},
	} {
		st := h.waitExit(t, h.launchCapped(t, tc.id, limit, tc.cmd...))
		if st.Code != string(apiv1.CodeOOMKilled) || st.System || st.Succeeded() {
			t.Errorf("%s: status = %+v, want failed with %s, not a system failure", tc.id, st, apiv1.CodeOOMKilled)
		}
		if !strings.Contains(st.Message, "OOMKilled") || !strings.Contains(st.Message, "32Mi") {
			t.Errorf("%s: message %q, want it to say OOMKilled and the 32Mi limit", tc.id, st.Message)
		}
	}
	waitUntil(t, "the attempts' memory cgroups to be removed", func() bool {
		left, _ := filepath.Glob(filepath.Join(m.dir, m.prefix+"*"))
		return len(left) == 0
	})
}

// A capped process that stays under its cap runs as it would uncapped,
// and one killed by SIGKILL without the kernel killing for memory is
// still the machine's doing, not an OOM kill.
func TestCapAloneIsNoOOMKill(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	requireMemoryCgroups(t, h.home)
	st := h.waitExit(t, h.launchCapped(t, "r/small/1", 64<<20, "/usr/bin/python3", "-c", "b = bytearray(1 << 20)"))
	if !st.Succeeded() || st.Code != "" {
		t.Errorf("under its cap: status = %+v, want success", st)
	}
	st = h.waitExit(t, h.launchCapped(t, "r/killed/1", 64<<20, "sh", "-c", "kill -KILL $$"))
	if st.Signal != "SIGKILL" || !st.System || st.Code != "" {
		t.Errorf("killed from outside: status = %+v, want a system failure by SIGKILL with no code", st)
	}
}

// A process a capped attempt left behind outside its process group is
// still in its cgroup, and is killed as the cgroup goes.
func TestACappedAttemptLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	requireMemoryCgroups(t, h.home)
	pidFile := filepath.Join(t.TempDir(), "pid")
	st := h.waitExit(t, h.launchCapped(t, "r/escape/1", 64<<20, "sh", "-c", "setsid sleep 300 & echo $! > "+pidFile))
	if !st.Succeeded() {
		t.Fatalf("status = %+v, want success", st)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the process left in the cgroup to be killed", func() bool {
		return syscall.Kill(pid, 0) != nil
	})
}
