package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// Launch implements backend.Backend. It submits the attempt's job unless
// a job of it ran (its claim is in the attempt's directory) or Slurm
// lists one. A crash between sbatch and anything after it is safe: the
// next Launch finds the job by its name. Two backends that submit at once
// make two jobs, of which the first to start claims the attempt and the
// other leaves at once: the processes never start twice. Calls of one
// backend for one attempt take turns, so that one engine, which may
// launch again while a launch is in flight, submits one job.
func (b *Backend) Launch(ctx context.Context, spec *job.Spec) error {
	unlock, err := b.launchTurn(ctx, spec.ID)
	if err != nil {
		return err
	}
	defer unlock()
	if err := checkID(spec.ID); err != nil {
		return &job.RefusedError{Code: string(apiv1.CodeSlurmRefused), Message: err.Error()}
	}
	if len(spec.Processes) == 0 {
		return &job.RefusedError{Code: string(apiv1.CodeSlurmRefused), Message: "the attempt has no process to run"}
	}
	if named, hosts := namedHosts(spec), hostCount(spec); named > hosts {
		return &job.RefusedError{Code: string(apiv1.CodeSlurmRefused), Message: fmt.Sprintf(
			"the attempt starts processes on %d node(s) and expects them to reach %d: an mpirun launcher that starts the ranks itself (over ssh), "+
				"which the Slurm backend does not run yet; use a runtime whose ranks kiln starts (torch, plain), or the local or Kubernetes backend", hosts, named)}
	}
	dir := b.attemptDir(spec.ID)
	if _, err := os.Stat(filepath.Join(dir, claimFile)); err == nil {
		return nil
	}
	jobs, err := b.jobsOf(ctx, spec.ID)
	if err != nil || len(jobs) > 0 {
		return err
	}
	if err := b.writeAttempt(dir, spec); err != nil {
		return fmt.Errorf("writing attempt %s's files under %s: %w", spec.ID, dir, err)
	}
	if _, err := b.command(ctx, "sbatch", b.sbatchArgs(dir, spec)...); err != nil {
		if refused(err) {
			return &job.RefusedError{Code: string(apiv1.CodeSlurmRefused), Message: err.Error()}
		}
		return err
	}
	return nil
}

// launchTurn waits until no other Launch of id runs in this backend and
// takes its turn; unlock ends it.
func (b *Backend) launchTurn(ctx context.Context, id job.AttemptID) (unlock func(), err error) {
	for {
		b.mu.Lock()
		busy, ok := b.launching[id]
		if !ok {
			done := make(chan struct{})
			b.launching[id] = done
			b.mu.Unlock()
			return func() {
				b.mu.Lock()
				delete(b.launching, id)
				b.mu.Unlock()
				close(done)
			}, nil
		}
		b.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// refused reports whether sbatch's failure is the cluster's refusal of
// the job itself (a partition, account or QOS it does not have, more than
// its nodes hold), which no retry changes, rather than the controller
// being out of reach.
func refused(err error) bool {
	var ce *commandError
	if !errors.As(err, &ce) {
		return false
	}
	s := ce.stderr
	return strings.Contains(s, "Batch job submission failed") &&
		!strings.Contains(s, "Socket timed out") && !strings.Contains(s, "Unable to contact") &&
		!strings.Contains(s, "try again")
}

// sbatchArgs are the arguments that submit spec's job.
func (b *Backend) sbatchArgs(dir string, spec *job.Spec) []string {
	args := []string{
		"--parsable", "--job-name=" + b.jobName(spec.ID), "--comment=" + comment(spec.ID),
		"--nodes=" + strconv.Itoa(hostCount(spec)), "--ntasks-per-node=1", "--no-requeue",
		"--chdir=" + dir, "--output=" + filepath.Join(dir, batchLog), "--open-mode=append",
		b.exportArg(),
	}
	c := spec.Container
	if c.MilliCPU > 0 {
		args = append(args, "--cpus-per-task="+strconv.FormatInt((c.MilliCPU+999)/1000, 10))
	}
	if c.Memory > 0 {
		args = append(args, "--mem="+strconv.FormatInt((c.Memory+1<<20-1)>>20, 10)+"M")
	}
	if c.GPU > 0 {
		args = append(args, "--gres=gpu:"+strconv.FormatInt(c.GPU, 10))
	}
	if c.TimeLimit > 0 {
		args = append(args, "--time="+strconv.Itoa(timeLimitMinutes(c.TimeLimit)))
	}
	for flag, v := range map[string]string{"--partition=": b.cfg.Partition, "--account=": b.cfg.Account, "--qos=": b.cfg.QOS} {
		if v != "" {
			args = append(args, flag+v)
		}
	}
	args = append(args, b.cfg.SbatchArgs...)
	return append(args, filepath.Join(dir, batchFile))
}

// exported are the variables of kiln's environment the batch script
// gets, where set: what it needs to run the Slurm commands. The rest of
// kiln's environment (its secrets) stays out of the job; the processes
// get their own environment in any case.
var exported = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "SLURM_CONF"}

// exportArg is sbatch's --export of the exported variables that are set.
func (b *Backend) exportArg() string {
	var names []string
	for _, name := range exported {
		if _, ok := os.LookupEnv(name); ok || (name == "SLURM_CONF" && b.cfg.Conf != "") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "--export=NONE"
	}
	return "--export=" + strings.Join(names, ",")
}

// timeLimitMinutes is Slurm's time limit for a task's timeout, in whole
// minutes: a minute more than the timeout, so that kiln's own timeout,
// which says what happened, ends the attempt first; Slurm's is the
// backstop while kiln is down.
func timeLimitMinutes(d time.Duration) int { return int((d+time.Minute-1)/time.Minute) + 1 }

// writeAttempt writes the attempt's directory: its spec, scripts, files,
// and empty logs and outputs directories. Each file is replaced whole, so
// that a job already reading one never sees half of it.
func (b *Backend) writeAttempt(dir string, spec *job.Spec) error {
	for _, d := range []string{dir, filepath.Join(dir, logsDir), filepath.Join(dir, outputsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	files := map[string]string{specFile: string(data), batchFile: batchScript(dir, spec)}
	for i := range spec.Processes {
		files[procFile(i)] = procScript(dir, spec, i)
	}
	for name, content := range spec.Files {
		if !filepath.IsLocal(name) {
			return fmt.Errorf("file %q is not a path inside the attempt's directory", name)
		}
		files[name] = content
	}
	for name, content := range files {
		if err := writeWhole(filepath.Join(dir, name), content); err != nil {
			return err
		}
	}
	return nil
}

// writeWhole writes a file by renaming a complete copy over it; owner
// only, as the scripts hold the processes' environments.
func writeWhole(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o700); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readSpec reads back the spec Launch wrote for attempt id.
func (b *Backend) readSpec(id job.AttemptID) (*job.Spec, error) {
	data, err := os.ReadFile(filepath.Join(b.attemptDir(id), specFile))
	if err != nil {
		return nil, err
	}
	var spec job.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("attempt %s's %s: %w", id, specFile, err)
	}
	return &spec, nil
}
