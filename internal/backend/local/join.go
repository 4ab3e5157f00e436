package local

import (
	"context"
	"slices"
	"syscall"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
)

var _ backend.Joiner = (*Backend)(nil)

// JoinArgs asks to start more processes in a running attempt: the
// processes of a host that joins an elastic gang.
type JoinArgs struct {
	ID         string
	Processes  []ProcessArgs
	WorkingDir string
	Sandbox    *Sandbox
	Memory     int64 // as StartArgs.Memory
}

// ResizeArgs asks to change the room an attempt holds.
type ResizeArgs struct {
	Capacity resource.Request
	Claim    resource.Claim
}

// ResizeReply says whether the attempt now holds what was asked.
type ResizeReply struct{ Resized bool }

// Join implements backend.Joiner: the supervisor starts host's processes
// of spec in the running gang, which counts them as its members from
// then on.
func (b *Backend) Join(ctx context.Context, spec *job.Spec, host int) error {
	args := JoinArgs{ID: spec.ID.String(), WorkingDir: spec.WorkingDir, Sandbox: b.cfg.Isolation.sandbox(spec.Project), Memory: spec.Container.Memory}
	for _, p := range spec.Processes {
		if p.Host == host {
			args.Processes = append(args.Processes, ProcessArgs{Name: p.Name, Command: p.Command, Env: p.Env, Host: p.Host})
		}
	}
	return b.call(ctx, "Supervisor.Join", args, &Empty{})
}

// Resize changes the room an attempt holds in the shared ledger; see
// resource.Ledger.Resize.
func (p *Pool) Resize(ctx context.Context, c resource.Claim) (bool, error) {
	var r ResizeReply
	err := p.b.call(ctx, "Supervisor.Resize", ResizeArgs{Capacity: p.capacity, Claim: c}, &r)
	return r.Resized, err
}

// Resize changes the room an attempt holds (see resource.Ledger.Resize).
func (s *session) Resize(a ResizeArgs, r *ResizeReply) error {
	r.Resized = s.ledger.Resize(a.Capacity, a.Claim)
	return nil
}

// Join starts more processes in a running gang (see Supervisor.join).
func (s *session) Join(a JoinArgs, _ *Empty) error { return s.join(a) }

// join starts a.Processes in the running gang a.ID, those it does not
// have yet; it does nothing for a gang that is not running, is stopping
// or whose end is decided. The lock is not held while forking.
func (s *Supervisor) join(a JoinArgs) error {
	dir, err := attemptDir(s.home, a.ID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	g, todo := s.gangs[a.ID], []ProcessArgs(nil)
	if g != nil && g.members != nil && !g.stopping && !job.Decide(g.view(), g.rule).Decided {
		for _, p := range a.Processes {
			if !g.has(p.Name) {
				todo = append(todo, p)
				g.joining = append(g.joining, p.Name)
			}
		}
	}
	s.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	box, err := s.confine(dir, a.Sandbox)
	if err != nil {
		return err
	}
	var started []*member
	cgroups := s.memory.attempt(a.ID, a.Memory)
	for _, p := range todo {
		cg, err := cgroups.host(p.Host)
		var m *member
		if err == nil {
			m, err = startProcess(place{dir: dir}, a.WorkingDir, p, s.paths, box, cg)
		}
		if err != nil {
			continue // the gang runs on without it, as if it were lost at once
		}
		started = append(started, m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adopt(a.ID, g, started)
	g.joining = slices.DeleteFunc(g.joining, func(n string) bool {
		return slices.ContainsFunc(todo, func(p ProcessArgs) bool { return p.Name == n })
	})
	return nil
}

// adopt makes started members of g, unless g ended or began stopping
// while they started: then they are killed. s.mu must be held.
func (s *Supervisor) adopt(id string, g *gang, started []*member) {
	if s.gangs[id] != g || g.stopping {
		for _, m := range started {
			_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
			_ = m.cmd.Wait()
		}
		return
	}
	g.members = append(g.members, started...)
	g.running += len(started)
	_ = s.journal.append(journalEntry{ID: id, Launch: s.launchRecord(g.members, g.started)}) // adoption after a restart finds them
	for _, m := range started {
		go s.wait(id, g, m)
	}
}

// has reports whether g has, or is starting, a member of that name.
func (g *gang) has(name string) bool {
	return slices.Contains(g.joining, name) || slices.ContainsFunc(g.members, func(m *member) bool { return m.name == name })
}
