package slurm

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"kiln.dev/kiln/internal/job"
)

// Abort implements backend.Backend: scancel of exactly the attempt's
// jobs. The abort is recorded in the attempt's status file first, so that
// the batch script counts the processes it sees end as stopped; then a
// running job's processes get SIGTERM (scancel --signal=TERM, which
// spares the batch script), and after grace the job is cancelled
// outright (SIGKILL after the cluster's KillWait). A pending job is
// cancelled at once.
func (b *Backend) Abort(ctx context.Context, id job.AttemptID, grace time.Duration) error {
	if !validID(id) {
		return nil // no job can have such a name: nothing to stop
	}
	jobs, err := b.jobsOf(ctx, id)
	if err != nil {
		return err
	}
	var pending, running []string
	for _, j := range jobs {
		switch {
		case j.pending():
			pending = append(pending, j.ID)
		case !j.final():
			running = append(running, j.ID)
		}
	}
	if len(pending)+len(running) == 0 {
		return nil
	}
	dir := b.attemptDir(id)
	if f, err := os.OpenFile(filepath.Join(dir, statusFile), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
		fmt.Fprintf(f, "abort %d\n", time.Now().UnixNano())
		f.Close()
	}
	if len(pending) > 0 {
		if _, err := b.command(ctx, "scancel", pending...); err != nil {
			return err
		}
	}
	if len(running) == 0 {
		return nil
	}
	if _, err := b.command(ctx, "scancel", append([]string{"--signal=TERM"}, running...)...); err != nil {
		return err
	}
	b.killAfter(id, running, grace)
	return nil
}

// killAfter cancels jobs outright once grace has passed, unless the
// backend is closed first.
func (b *Backend) killAfter(id job.AttemptID, jobs []string, grace time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.closed:
		return
	default:
	}
	if t, ok := b.timers[id]; ok {
		t.Stop()
	}
	b.timers[id] = time.AfterFunc(grace, func() {
		b.mu.Lock()
		delete(b.timers, id)
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = b.command(ctx, "scancel", jobs...) // a job already gone is fine
	})
}

// Release implements backend.Releaser: a job submitted twice for the
// attempt (two backends launching at once) that still waits is
// cancelled; the one that ran is done.
func (b *Backend) Release(ctx context.Context, id job.AttemptID, _ bool) error {
	if !validID(id) {
		return nil // never launched: nothing kept
	}
	rec, err := readRecord(b.attemptDir(id))
	if err != nil {
		return err
	}
	jobs, err := b.jobsOf(ctx, id)
	if err != nil {
		return err
	}
	var stray []string
	for _, j := range jobs {
		if j.ID != rec.jobID && !j.final() {
			stray = append(stray, j.ID)
		}
	}
	if len(stray) == 0 {
		return nil
	}
	_, err = b.command(ctx, "scancel", stray...)
	return err
}

// RemoveRun implements backend.RunRemover: the run's directory goes,
// unless a job of the run still waits or runs.
func (b *Backend) RemoveRun(ctx context.Context, run string) error {
	if run == "" || strings.ContainsAny(run, "/\x00") || run == "." || run == ".." {
		return fmt.Errorf("run ID %q names no directory", run)
	}
	jobs, err := b.allJobs(ctx)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if id, ok := attemptOf(j); ok && id.Run == run && !j.final() {
			return fmt.Errorf("run %s still has Slurm job %s (attempt %s) %s; abort it first", run, j.ID, id, strings.ToLower(j.State))
		}
	}
	return os.RemoveAll(b.runDir(run))
}

// hostTokenOf is the stand-in for host i's address in a spec: the batch
// script replaces it with the address of the allocation's node i.
func hostTokenOf(i int) string { return fmt.Sprintf(hostToken, i) }

// portBase and portSpan are where Network's ports lie.
const portBase, portSpan = 20000, 20000

// Network implements backend.Networker. A job's nodes are known only
// once Slurm allocates them, so the hosts are tokens the batch script
// replaces with the nodes' addresses in every process's environment and
// file; host 0, the master, is the allocation's first node. The ports
// are derived from the attempt's ID, so the same attempt always gets the
// same ones; two jobs on one node may draw the same port, rarely.
func (b *Backend) Network(_ context.Context, id job.AttemptID, nodes, ports int) (job.Network, error) {
	n := job.Network{Hosts: make([]string, nodes), Ports: make([]int, ports)}
	for i := range n.Hosts {
		n.Hosts[i] = hostTokenOf(i)
	}
	h := fnv.New32a()
	h.Write([]byte(id.String()))
	first := int(h.Sum32() % uint32(portSpan-ports))
	for k := range n.Ports {
		n.Ports[k] = portBase + first + k
	}
	return n, nil
}

// ReadFile implements backend.FileReader, over the shared filesystem.
func (b *Backend) ReadFile(_ context.Context, id job.AttemptID, name string, limit int64) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("%q is not a path inside the attempt's output directory", name)
	}
	data, err := readBeneath(b.attemptDir(id), path.Join(outputsDir, filepath.ToSlash(name)), limit)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("reading %s of attempt %s: %w", name, id, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s of attempt %s is over %d bytes", name, id, limit)
	}
	return data, nil
}
