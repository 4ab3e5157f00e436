package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
)

// maxExits is how many recent exits the supervisor remembers for
// watchers, at least: it keeps up to twice as many.
const maxExits = 1 << 14

// gangGrace is how long the rest of a gang gets between SIGTERM and
// SIGKILL after one of its processes failed: a rank that dies takes its
// gang down within a second.
const gangGrace = 500 * time.Millisecond

// Supervisor forks attempts, waits on them and records how they ended. One
// runs per $KILN_HOME, outliving the engines that use it, so attempts go on
// when an engine dies and their exit status is on disk when it returns.
type Supervisor struct {
	home     string
	instance string

	ledger   *resource.Ledger // the machine's room, shared by every engine on the home
	accounts *accounts        // projects' numbered accounts, for isolation by users
	opened   atomic.Bool      // KILN_HOME made traversable, for isolation by users

	mu    sync.Mutex
	gangs map[string]*gang
	// leftovers are gangs whose end was recorded while members still ran,
	// left to end on their own (cleanPodPolicy None).
	leftovers map[string]*gang
	paths     *pathCache
	journal   *journal // the runs' records of launches and ends
	exits     []Exit   // recent exits; exits[i] has sequence base+i+1
	base      uint64
	changed   chan struct{} // closed and replaced on every exit, and when a node starts waiting
	// unwritten are exits whose status file could not be written yet.
	unwritten map[string]statusRecord
	lastBusy  time.Time
	memory    memoryCgroups // where attempts that declare memory are capped
}

// gang is one attempt's processes. members is nil while they start.
type gang struct {
	members  []*member
	rule     job.Rule
	dropped  []string // members of an elastic gang reported lost
	joining  []string // members of an elastic gang being started
	running  int
	stopping bool
	grace    time.Duration
	started  time.Time
	// leave says the members still running when the gang's end is
	// decided end on their own; recorded that the end was recorded then.
	leave, recorded bool
}

type member struct {
	name     string
	host     int
	cmd      *exec.Cmd
	ticks    [2]uint64  // the first and last tick its start time may be (forkTicks)
	captures []*capture // its stdout and stderr, on their way to its logs
	done     bool
	exit     int
	signal   string
	stopped  bool // the supervisor signalled it: on request, or taking its gang down
	finished time.Time
	cgroup   *hostCgroup // its host's memory cgroup, if capped
	oom      bool        // the kernel killed it for its cgroup's memory
}

// NewSupervisor returns a supervisor for home.
func NewSupervisor(home string) *Supervisor {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &Supervisor{
		home: home, instance: hex.EncodeToString(b), ledger: resource.NewLedger(), accounts: newAccounts(home),
		gangs: map[string]*gang{}, leftovers: map[string]*gang{}, paths: newPathCache(), journal: newJournal(home), unwritten: map[string]statusRecord{},
		changed: make(chan struct{}), lastBusy: time.Now(), memory: findMemoryCgroups(home),
	}
}

// start starts an attempt's processes, each in its own process group,
// unless the attempt was started before (by this supervisor or an earlier
// one). The room it was admitted with is held for session until it ends,
// and the room it was handed goes back, in the same step that reserves
// its ID: an attempt that ended before it started holds nothing. The lock
// is not held while forking, so starts run in parallel.
func (s *Supervisor) start(session string, a StartArgs) error {
	dir, err := attemptDir(s.home, a.ID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if _, known := s.gangs[a.ID]; known {
		s.ledger.Release(a.Release...)
		s.mu.Unlock()
		return nil
	}
	g := &gang{rule: job.Rule{Leader: a.Leader, MinHosts: a.MinHosts}, leave: a.Leave} // reserves the ID
	s.gangs[a.ID] = g
	s.mu.Unlock()
	fresh, made, err := s.claimDir(dir, a)
	s.mu.Lock()
	if err == nil && !fresh {
		delete(s.gangs, a.ID)
		s.ledger.Release(a.Release...)
		s.mu.Unlock()
		return nil
	}
	s.stopLeftovers(a.ID)
	if a.Room != nil {
		s.ledger.Hold(session, *a.Room)
		s.ledger.Bind(a.ID)
	}
	s.ledger.Release(a.Release...)
	s.mu.Unlock()

	var members []*member
	if err == nil {
		members, err = s.startAll(dir, a, made)
	}
	now := time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.gangs, a.ID)
		_ = os.MkdirAll(dir, 0o755) // the failure may have come before the directory
		var nf *notFoundError
		s.recordExit(a.ID, statusRecord{ExitCode: -1, StartError: err.Error(), NotFound: errors.As(err, &nf), StartedAt: now, FinishedAt: now})
		return nil
	}
	if err := s.journal.append(journalEntry{ID: a.ID, Launch: s.launchRecord(members, now)}); err != nil {
		for _, m := range members {
			_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		}
		delete(s.gangs, a.ID)
		return fmt.Errorf("recording launch of %s: %w", a.ID, err)
	}
	g.members, g.running, g.started = members, len(members), now
	if g.stopping { // an Abort arrived while it was starting
		s.terminate(g, g.grace)
	}
	for _, m := range members {
		go s.wait(a.ID, g, m)
	}
	return nil
}

// claimDir makes the attempt's directory and reports whether the attempt
// is new, and whether its directory was made now (so holds nothing of an
// earlier start). Its directory is made by the attempt's first start, or
// by a stop that came before it: only then are the records looked at, to
// tell an attempt started or stopped before (not new) from one whose
// start was cut short (new: started again).
func (s *Supervisor) claimDir(dir string, a StartArgs) (fresh, made bool, err error) {
	made, err = makeAttemptDir(dir, firstAttempt(a.ID), a.Sandbox != nil && a.Sandbox.Mode == IsolateUsers)
	if err != nil || made {
		return true, made, err
	}
	s.mu.Lock()
	_, unwritten := s.unwritten[a.ID]
	s.mu.Unlock()
	if unwritten {
		return false, false, nil
	}
	recs, err := readRecords(s.home, a.ID)
	return recs.launch == nil && recs.exit == nil, false, err
}

// firstAttempt reports whether checked attempt ID id is its task's first.
func firstAttempt(id string) bool { return strings.HasSuffix(id, "/1") }

func (s *Supervisor) launchRecord(members []*member, now time.Time) *launchRecord {
	rec := &launchRecord{Supervisor: s.instance, StartedAt: now}
	var until []uint64
	for i, m := range members {
		rec.PIDs = append(rec.PIDs, m.cmd.Process.Pid)
		rec.StartTicks = append(rec.StartTicks, m.ticks[0])
		if m.ticks[1] != m.ticks[0] && until == nil {
			until = append(make([]uint64, 0, len(members)), rec.StartTicks[:i]...)
		}
		if until != nil {
			until = append(until, m.ticks[1])
		}
	}
	rec.StartTicksUntil = until
	return rec
}

// startAll writes the attempt's files and starts its processes. If one
// cannot start, those already started are killed. made says the attempt's
// directory was made for this start: nothing of an earlier one is in it.
func (s *Supervisor) startAll(dir string, a StartArgs, made bool) ([]*member, error) {
	if len(a.Processes) == 0 {
		return nil, errors.New("no process to start")
	}
	for name, content := range a.Files {
		if strings.ContainsAny(name, "/\\") {
			return nil, fmt.Errorf("file name %q has a path separator", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	box, err := s.confine(dir, a.Sandbox)
	if err != nil {
		return nil, fmt.Errorf("isolating the attempt: %w", err)
	}
	var members []*member
	cgroups := s.memory.attempt(a.ID, a.Memory)
	for _, p := range a.Processes {
		cg, err := cgroups.host(p.Host)
		var m *member
		if err == nil {
			m, err = startProcess(place{dir, made}, a.WorkingDir, p, s.paths, box, cg)
		}
		if err != nil {
			for _, m := range members {
				_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
				_ = m.cmd.Wait()
			}
			cgroups.remove()
			return nil, err
		}
		members = append(members, m)
	}
	return members, nil
}

type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// logName returns the file a process's stream is written to: "stdout" for
// a task's only process, "<name>.stdout" for a gang's members.
func logName(process, stream string) string {
	if process == "" {
		return stream
	}
	return process + "." + stream
}

// place is an attempt's directory, and whether it was made for this
// start: a directory made now holds no file of an earlier start to
// clear.
type place struct {
	dir  string
	made bool
}

// startProcess starts process p of an attempt, its output copied to its
// logs.
func startProcess(at place, workingDir string, p ProcessArgs, paths *pathCache, box *confinement, cg *hostCgroup) (*member, error) {
	cmd, captures, err := command(at, workingDir, p, paths, box)
	if err == nil {
		err = cg.apply(cmd, box.uid())
	}
	var forked uint64
	if err == nil {
		forked = forkClock.before()
		err = box.explain(cmd.Start())
	}
	closeFiles(cmd)
	for _, c := range captures {
		if err != nil {
			c.abandon()
		} else {
			c.start()
		}
	}
	if err != nil {
		return nil, err
	}
	return &member{name: p.Name, host: p.Host, cmd: cmd, ticks: forkTicks(cmd.Process.Pid, forked), captures: captures, cgroup: cg}, nil
}

func command(at place, workingDir string, p ProcessArgs, paths *pathCache, box *confinement) (*exec.Cmd, []*capture, error) {
	if len(p.Command) == 0 {
		return nil, nil, errors.New("empty command")
	}
	path, err := paths.lookPath(p.Command[0], p.Env)
	if err != nil {
		return nil, nil, err
	}
	dir := at.dir
	out, stdout, err := createCapture(dir, logName(p.Name, "stdout"), at.made)
	if err != nil {
		return nil, nil, err
	}
	errs, stderr, err := createCapture(dir, logName(p.Name, "stderr"), at.made)
	if err != nil {
		out.abandon()
		stdout.Close()
		return nil, nil, err
	}
	env := append(append([]string(nil), p.Env...), "KILN_OUTPUTS="+filepath.Join(dir, outputsDir))
	cmd := &exec.Cmd{
		Path: path, Args: p.Command, Env: env, Dir: workingDir, Stdout: stdout, Stderr: stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if null := devNull(); null != nil {
		cmd.Stdin = null
	}
	box.apply(cmd, path)
	if cmd.Dir == "" {
		cmd.Dir = dir
	}
	return cmd, []*capture{out, errs}, nil
}

// devNull is every process's standard input, opened once: os/exec would
// open and close /dev/null for each process.
var devNull = sync.OnceValue(func() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil
	}
	return f
})

// closeFiles closes this process's ends of a started (or failed) command's
// pipes: the process holds its own.
func closeFiles(cmd *exec.Cmd) {
	if cmd == nil {
		return
	}
	for _, w := range []any{cmd.Stdout, cmd.Stderr} {
		if f, ok := w.(*os.File); ok {
			f.Close()
		}
	}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case os.IsNotExist(err):
		return &notFoundError{fmt.Sprintf("command %q does not exist", p)}
	case err != nil:
		return err
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return fmt.Errorf("command %q is not an executable file", p)
	}
	return nil
}

// wait waits for one member, stops whatever it left in its group, takes
// the gang down once its end is decided (a member failed, or the leader
// ended), and records the attempt's end when the last member is gone.
func (s *Supervisor) wait(id string, g *gang, m *member) {
	waitExit(m.cmd)
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	drained := time.Now().Add(captureDrain)
	for _, c := range m.captures { // its logs are whole before its end is told
		c.wait(time.Until(drained))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m.done, m.exit, m.finished = true, m.cmd.ProcessState.ExitCode(), time.Now().UTC()
	if ws, ok := m.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		m.signal = signalName(ws.Signal())
	}
	// As a container's: a process that failed in a cgroup where the kernel
	// killed for memory was OOMKilled, if a shell it ran was the one killed.
	m.oom = (m.exit != 0 || m.signal != "") && !m.stopped && m.cgroup.oomKills() > 0
	g.running--
	if g.running == 0 {
		g.removeCgroups()
	}
	out := job.Decide(g.view(), g.rule)
	decided := g.running > 0 && out.Decided && !g.stopping && !g.recorded
	switch {
	case decided && g.leave:
		g.recorded = true
		delete(s.gangs, id)
		s.leftovers[id] = g
		s.recordExit(id, g.status(out))
	case decided:
		s.terminate(g, gangGrace)
	}
	switch {
	case g.running > 0:
	case g.recorded:
		delete(s.leftovers, id)
	default:
		delete(s.gangs, id)
		s.recordExit(id, g.status(out))
		return
	}
	if !out.Decided && len(out.Dropped) > len(g.dropped) { // an elastic gang lost a host and goes on
		g.dropped = slices.Clone(out.Dropped)
		rec := g.status(out)
		rec.Running, rec.FinishedAt = true, time.Time{}
		s.publish(id, rec)
	}
}

// stopLeftovers stops what earlier attempts of id's node left running:
// a gang restarts whole, never beside its last attempt. s.mu must be held.
func (s *Supervisor) stopLeftovers(id string) {
	if len(s.leftovers) == 0 {
		return
	}
	a, err := job.ParseAttemptID(id)
	if err != nil {
		return
	}
	for other, g := range s.leftovers {
		if o, err := job.ParseAttemptID(other); err == nil && o.Run == a.Run && o.Node == a.Node && !g.stopping {
			s.terminate(g, gangGrace)
		}
	}
}

// view is how the gang's members stand, for job.Decide.
func (g *gang) view() []job.Member {
	out := make([]job.Member, len(g.members))
	for i, m := range g.members {
		out[i] = job.Member{
			Name: m.name, Host: m.host, Ended: m.done, Exit: m.exit, Signal: m.signal, Stopped: m.stopped, FinishedAt: m.finished,
		}
	}
	return out
}

// status is the record of a gang that has ended, as out decided it. A
// member killed by SIGKILL that the supervisor did not signal was killed
// by the machine (the kernel's out-of-memory killer, say) or an operator:
// a system failure, not the task's; unless its host's memory cgroup says
// the kernel killed for the memory the task declared: then it was
// OOMKilled, the task's failure.
func (g *gang) status(out job.Outcome) statusRecord {
	rec := statusRecord{
		StartedAt: g.started, FinishedAt: time.Now().UTC(), Processes: map[string]int{},
		ExitCode: out.ExitCode, Signal: out.Signal, Stopped: out.Stopped,
	}
	for _, m := range g.members {
		if m.oom {
			rec.OOMKilled = append(rec.OOMKilled, m.name)
			rec.MemoryLimit = m.cgroup.limit
		}
		rec.Processes[m.name] = m.exit
		if !m.done {
			rec.Processes[m.name] = -1
			rec.LeftRunning = append(rec.LeftRunning, m.name)
		}
		if m.stopped {
			rec.StoppedProcesses = append(rec.StoppedProcesses, m.name)
		}
		if m.done {
			rec.addLosses(m.captures)
		}
	}
	if out.Failed {
		rec.Failed = out.Decider
	}
	rec.System = out.Failed && out.Signal == signalName(syscall.SIGKILL) && !slices.Contains(rec.OOMKilled, out.Decider)
	rec.Dropped = out.Dropped
	return rec
}

// addLosses records what the logs of captures, copied to their end, lost.
func (r *statusRecord) addLosses(captures []*capture) {
	for _, c := range captures {
		if c.loss.Bytes == 0 {
			continue
		}
		if r.LogsLost == nil {
			r.LogsLost = map[string]logLoss{}
		}
		r.LogsLost[filepath.Base(c.path)] = c.loss
	}
}

// recordExit writes the status file, gives the attempt's room back and
// tells watchers. s.mu must be held.
func (s *Supervisor) recordExit(id string, rec statusRecord) {
	s.ledger.Exited(id)
	if err := s.writeStatus(id, rec); err != nil {
		// Kept in memory, answered by State and written again later: an
		// exit is never forgotten because the disk was full.
		s.unwritten[id] = rec
		fmt.Fprintf(os.Stderr, "kiln supervisor: recording exit of %s (kept until it can be written): %v\n", id, err)
	}
	s.publish(id, rec)
	s.lastBusy = time.Now()
}

// publish tells watchers how attempt id stands: it ended, or, for an
// elastic gang that lost a host, runs on. s.mu must be held.
func (s *Supervisor) publish(id string, rec statusRecord) {
	s.exits = append(s.exits, Exit{ID: id, Status: rec})
	if len(s.exits) >= 2*maxExits {
		// The oldest half goes at once, so that keeping the last
		// maxExits costs each exit a constant share of one copy (a copy
		// per exit, past the first maxExits, made a run of 100,000 tasks
		// quadratic).
		drop := len(s.exits) - maxExits
		s.exits = append(make([]Exit, 0, 2*maxExits), s.exits[drop:]...)
		s.base += uint64(drop)
	}
	s.wake()
}

// wake wakes everyone waiting in exits. s.mu must be held.
func (s *Supervisor) wake() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// signalName is a signal's name, "SIGKILL", as people know it.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return sig.String()
}

// writeStatus records an attempt's end in its run's journal.
func (s *Supervisor) writeStatus(id string, rec statusRecord) error {
	return s.journal.append(journalEntry{ID: id, Exit: &rec})
}

// writeUnwritten tries again to write the exits that could not be written.
func (s *Supervisor) writeUnwritten() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, rec := range s.unwritten {
		if s.writeStatus(id, rec) == nil {
			delete(s.unwritten, id)
		}
	}
}
