package local

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memoryCgroups is where the supervisor makes a memory cgroup for each
// host of an attempt that declares its memory: the cgroup the supervisor
// itself runs in, under the memory controller (cgroup v1) or the unified
// hierarchy (v2). The cgroup caps the host's processes at the declared
// memory, as a container's limit does, and its counters tell an
// out-of-memory kill from any other SIGKILL. dir is empty where no such
// cgroup can be made (not root, no delegation): then memory is only
// counted for admission and such kills are the machine's.
type memoryCgroups struct {
	dir string
	v2  bool
	// prefix starts the name of every cgroup made for this KILN_HOME:
	// supervisors of other homes may share dir.
	prefix string
}

// cgroupPrefix starts the name of every cgroup a supervisor makes.
const cgroupPrefix = "kiln-"

// findMemoryCgroups finds the supervisor's own memory cgroup and checks a
// child can be made in it; it removes the empty children an earlier
// supervisor of home left.
func findMemoryCgroups(home string) memoryCgroups {
	m := ownMemoryCgroup()
	if m.dir == "" {
		return m
	}
	probe, err := os.MkdirTemp(m.dir, cgroupPrefix+"probe-")
	if err != nil {
		return memoryCgroups{}
	}
	ok := fileExists(filepath.Join(probe, m.limitFile()))
	_ = os.Remove(probe)
	if !ok {
		return memoryCgroups{}
	}
	sum := sha256.Sum256([]byte(home))
	m.prefix = cgroupPrefix + hex.EncodeToString(sum[:4]) + "-"
	if old, err := filepath.Glob(filepath.Join(m.dir, m.prefix+"*")); err == nil {
		for _, d := range old {
			_ = os.Remove(d) // only an empty cgroup goes
		}
	}
	return m
}

// CapsMemory reports whether a supervisor of home started by this user
// on this machine caps each host's processes at the memory its task
// declares, and so tells out-of-memory kills from others.
func CapsMemory(home string) bool { return findMemoryCgroups(home).dir != "" }

// ownMemoryCgroup reads /proc/self/cgroup and /proc/self/mountinfo.
func ownMemoryCgroup() memoryCgroups {
	rel, v2, ok := memoryCgroupPath()
	if !ok {
		return memoryCgroups{}
	}
	mount, root, ok := cgroupMount(v2)
	if !ok {
		return memoryCgroups{}
	}
	r, err := filepath.Rel(root, rel)
	if err != nil || strings.HasPrefix(r, "..") {
		return memoryCgroups{}
	}
	m := memoryCgroups{dir: filepath.Join(mount, r), v2: v2}
	if v2 && !m.v2MemoryDelegated() {
		return memoryCgroups{}
	}
	return m
}

// memoryCgroupPath is this process's cgroup under the memory controller,
// or in the unified hierarchy when no v1 memory controller is mounted.
func memoryCgroupPath() (path string, v2, ok bool) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", false, false
	}
	defer f.Close()
	unified := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return parts[2], false, true
			}
		}
	}
	return unified, true, unified != ""
}

// cgroupMount is where the hierarchy holding the memory controller (v1)
// or the unified one (v2) is mounted, and the cgroup at its root.
func cgroupMount(v2 bool) (mount, root string, ok bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
		left, right, found := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(left), strings.Fields(right)
		if !found || len(fields) < 5 || len(tail) < 3 {
			continue
		}
		switch {
		case v2 && tail[0] == "cgroup2":
			return fields[4], fields[3], true
		case !v2 && tail[0] == "cgroup" && hasOption(tail[2], "memory"):
			return fields[4], fields[3], true
		}
	}
	return "", "", false
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// v2MemoryDelegated reports whether children of m.dir get the memory
// controller, enabling it if it may.
func (m memoryCgroups) v2MemoryDelegated() bool {
	if b, err := os.ReadFile(filepath.Join(m.dir, "cgroup.subtree_control")); err == nil && hasWord(string(b), "memory") {
		return true
	}
	return os.WriteFile(filepath.Join(m.dir, "cgroup.subtree_control"), []byte("+memory"), 0) == nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

func (m memoryCgroups) limitFile() string {
	if m.v2 {
		return "memory.max"
	}
	return "memory.limit_in_bytes"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// attemptCgroups makes the memory cgroups of one attempt's hosts, each
// once, as their first process starts.
type attemptCgroups struct {
	m     memoryCgroups
	id    string
	limit int64
	made  map[int]*hostCgroup
	errs  map[int]error
}

// attempt is nil, costing nothing, when the attempt is not capped.
func (m memoryCgroups) attempt(id string, limit int64) *attemptCgroups {
	if m.dir == "" || limit <= 0 {
		return nil
	}
	return &attemptCgroups{m: m, id: id, limit: limit, made: map[int]*hostCgroup{}, errs: map[int]error{}}
}

// host is host's cgroup (nil when there is no cap), made on first use.
func (a *attemptCgroups) host(host int) (*hostCgroup, error) {
	if a == nil {
		return nil, nil
	}
	if cg, ok := a.made[host]; ok {
		return cg, a.errs[host]
	}
	cg, err := a.m.make(a.id, host, a.limit)
	a.made[host], a.errs[host] = cg, err
	return cg, err
}

// remove removes every cgroup made, for an attempt that did not start.
func (a *attemptCgroups) remove() {
	if a == nil {
		return
	}
	for _, cg := range a.made {
		cg.remove()
	}
}

// hostCgroup is the memory cgroup of one host's processes of an attempt.
type hostCgroup struct {
	dir   string
	v2    bool
	limit int64
}

// unsafeName matches what an attempt ID may hold that a cgroup's name
// should not.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// make makes the cgroup of host of attempt id, capped at limit bytes; nil
// when the supervisor makes none.
func (m memoryCgroups) make(id string, host int, limit int64) (*hostCgroup, error) {
	if m.dir == "" || limit <= 0 {
		return nil, nil
	}
	h := &hostCgroup{dir: filepath.Join(m.dir, fmt.Sprintf("%s%s-h%d", m.prefix, unsafeName.ReplaceAllString(id, "_"), host)), v2: m.v2, limit: limit}
	h.remove() // one an earlier try of this start left
	if err := os.Mkdir(h.dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the memory cgroup of host %d: %w", host, err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, m.limitFile()), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
		h.remove()
		return nil, fmt.Errorf("capping host %d's memory at %d bytes: %w", host, limit, err)
	}
	if m.v2 { // swap would only slow the cap down
		_ = os.WriteFile(filepath.Join(h.dir, "memory.swap.max"), []byte("0"), 0)
	}
	return h, nil
}

// procs is the file a process writes itself to, to join h.
func (h *hostCgroup) procs() string { return filepath.Join(h.dir, "cgroup.procs") }

// oomKills is how many of h's processes the kernel killed for memory; 0
// for no cgroup.
func (h *hostCgroup) oomKills() int {
	if h == nil {
		return 0
	}
	file, key := "memory.oom_control", "oom_kill"
	if h.v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(h.dir, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// remove kills what is left in h and removes it.
func (h *hostCgroup) remove() {
	if h == nil {
		return
	}
	for try := range 50 {
		err := os.Remove(h.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || !errors.Is(err, syscall.EBUSY) {
			return
		}
		b, _ := os.ReadFile(h.procs())
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		<-time.After(time.Duration(try+1) * time.Millisecond) // a killed process takes a moment to leave; nothing cancels a removal
	}
}

// joinCgroupArg0 is the name the supervisor gives its own binary when it
// starts it to put a task's process into its memory cgroup before the
// task's program runs: RunSandboxIfAsked sees it, writes the process into
// the cgroup and executes the rest of its arguments. Moving a process in
// after it started would miss the children it forked first.
const joinCgroupArg0 = "kiln-task-cgroup"

// joinCgroup takes PROCS -- PATH ARGV..., writes this process into the
// cgroup whose procs file is PROCS, and executes PATH. It returns only on
// failure.
func joinCgroup(args []string) error {
	if len(args) < 4 || args[1] != "--" {
		return errors.New("want PROCS -- PATH ARGV")
	}
	if err := os.WriteFile(args[0], []byte("0"), 0); err != nil {
		return fmt.Errorf("joining its memory cgroup: %w", err)
	}
	return syscall.Exec(args[2], args[3:], os.Environ())
}

// apply makes cmd start in h, through a step that joins it first (see
// joinCgroupArg0). Run as uid (not -1), the step needs h's procs file to
// be the uid's.
func (h *hostCgroup) apply(cmd *exec.Cmd, uid int) error {
	if h == nil {
		return nil
	}
	if uid >= 0 {
		if err := os.Chown(h.procs(), uid, -1); err != nil {
			return fmt.Errorf("letting the task's account join its memory cgroup: %w", err)
		}
	}
	cmd.Args = append([]string{joinCgroupArg0, h.procs(), "--", cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	return nil
}

// removeCgroups removes the memory cgroups of g's members, once none
// runs, in the background: what a member left in one is killed first,
// which takes a moment. s.mu must be held.
func (g *gang) removeCgroups() {
	var cgs []*hostCgroup
	for _, m := range g.members {
		if m.cgroup != nil && !slices.Contains(cgs, m.cgroup) {
			cgs = append(cgs, m.cgroup)
		}
	}
	if len(cgs) == 0 {
		return
	}
	go func() {
		for _, cg := range cgs {
			cg.remove()
		}
	}()
}
