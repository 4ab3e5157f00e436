package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// Observe implements backend.Backend. How the processes ended is read
// from what the batch script recorded in the attempt's directory; what
// Slurm did with the job (pending and why, running, ended without the
// script: cancelled, timed out, its node failed) from squeue, which
// lists ended jobs for the cluster's MinJobAge, and after that from
// sacct where the cluster keeps accounting.
func (b *Backend) Observe(ctx context.Context, spec *job.Spec) (job.Status, error) {
	if !validID(spec.ID) {
		return job.Status{State: job.StateUnknown}, nil // Launch refuses it
	}
	dir := b.attemptDir(spec.ID)
	rec, err := readRecord(dir)
	if err != nil {
		return job.Status{}, err
	}
	jobs, err := b.jobsOf(ctx, spec.ID)
	if rec.done {
		return b.finished(spec, rec, jobs, err), nil
	}
	if err != nil {
		return job.Status{}, err
	}
	j, found := pick(jobs, rec.jobID)
	if !found && rec.jobID != "" {
		j = slurmJob{ID: rec.jobID, State: b.accounted(ctx, rec.jobID)}
		found = j.State != ""
	}
	switch {
	case found && j.pending():
		return job.Status{State: job.StateRunning, Queue: &job.Queue{
			Reason:    queueReason(j.Reason),
			Message:   fmt.Sprintf("Slurm job %s is pending: %s", j.ID, pendingText(j.Reason)),
			Processes: names(spec),
		}}, nil
	case found && !j.final():
		return job.Status{State: job.StateRunning}, nil
	case found:
		if rec, err = readRecord(dir); err != nil { // the script may have ended since
			return job.Status{}, err
		}
		return b.exited(spec, rec, j.State), nil
	case rec.jobID != "":
		// Claimed, but neither Slurm nor the script says how it ended.
		return job.Status{State: job.StateLost, ExitCode: -1, System: true}, nil
	case rec.aborted:
		return job.Status{State: job.StateExited, ExitCode: -1, Stopped: true}, nil
	}
	return job.Status{State: job.StateUnknown}, nil
}

// finished is the status of an attempt whose batch script saw every
// process end. Slurm still has the last word while it lists the job: a
// node that failed under the job can make srun report a killed step as
// ended well, and only the job's state (NODE_FAIL) tells. Until the job
// is final the attempt runs on; once Slurm no longer lists it (or cannot
// be asked), the script's record stands.
func (b *Backend) finished(spec *job.Spec, rec record, jobs []slurmJob, listErr error) job.Status {
	if listErr == nil {
		if j, found := pick(jobs, rec.jobID); found {
			if !j.final() {
				return job.Status{State: job.StateRunning}
			}
			return b.exited(spec, rec, j.State)
		}
	}
	return b.exited(spec, rec, "")
}

// pick returns the job that claimed the attempt, or without a claim the
// one that waits or runs.
func pick(jobs []slurmJob, claimed string) (slurmJob, bool) {
	for _, j := range jobs {
		if j.ID == claimed || (claimed == "" && !j.final()) {
			return j, true
		}
	}
	if claimed == "" && len(jobs) > 0 {
		return jobs[0], true
	}
	return slurmJob{}, false
}

func names(spec *job.Spec) []string {
	out := make([]string, len(spec.Processes))
	for i, p := range spec.Processes {
		out[i] = p.Name
	}
	return out
}

// exited is the status of an attempt whose job ended in Slurm state
// state ("" when the script saw every process end). The processes the
// script did not see end ended with the job: stopped when it was
// cancelled or ran out of time, lost when its node failed or it was
// preempted.
func (b *Backend) exited(spec *job.Spec, rec record, state string) job.Status {
	dir := b.attemptDir(spec.ID)
	members := make([]job.Member, len(spec.Processes))
	for i, p := range spec.Processes {
		members[i] = job.Member{Name: p.Name, Host: p.Host}
	}
	for _, e := range rec.exits {
		if e.proc < 0 || e.proc >= len(members) {
			continue
		}
		m := &members[e.proc]
		m.Ended, m.Stopped, m.FinishedAt = true, e.stopped, e.at
		m.Exit, m.Signal = exitOf(e.code)
	}
	end := rec.finishedAt
	if end.IsZero() {
		end = time.Now()
	}
	st := job.Status{State: job.StateExited, StartedAt: rec.started, FinishedAt: end}
	for i := range members {
		m := &members[i]
		if m.Ended {
			continue
		}
		m.Ended, m.Exit, m.Signal, m.FinishedAt = true, -1, "SIGKILL", end
		m.Lost = systemState(state)
		m.Stopped = !m.Lost
	}
	out := job.Decide(members, job.RuleOf(spec))
	st.ExitCode, st.Signal, st.Stopped, st.System, st.Dropped = out.ExitCode, out.Signal, out.Stopped, out.Lost, out.Dropped
	if out.Failed {
		st.Failed = out.Decider
	}
	st.Processes = make(map[string]int, len(members))
	for i, m := range members {
		st.Processes[m.Name] = m.Exit
		if m.Stopped {
			st.StoppedProcesses = append(st.StoppedProcesses, m.Name)
		}
		if out.Decider == m.Name && rec.notFound[i] {
			st.NotFound = true
			st.StartError = fmt.Sprintf("command %q not found on the node", spec.Processes[i].Command[0])
		}
	}
	b.explain(&st, spec, rec, state)
	if st.Succeeded() {
		st.Outputs, st.OutputError = readOutputs(dir, spec.Outputs)
		if st.OutputError == "" {
			st.OutputError = missingArtifact(dir, spec.Artifacts)
		}
	}
	return st
}

// explain adds what Slurm did to the status of a job it ended.
func (b *Backend) explain(st *job.Status, spec *job.Spec, rec record, state string) {
	switch {
	case systemState(state):
		st.System, st.ExitCode = true, -1
		st.Code = string(apiv1.CodeSlurmNodeFailure)
		st.Message = fmt.Sprintf("Slurm ended job %s of attempt %s: %s", rec.jobID, spec.ID, state)
	case state == "TIMEOUT":
		st.Code = string(apiv1.CodeSlurmTimeLimit)
		st.Message = fmt.Sprintf("Slurm ended job %s of attempt %s at its time limit", rec.jobID, spec.ID)
	case state == "OUT_OF_MEMORY":
		st.Message = fmt.Sprintf("Slurm ended job %s of attempt %s: out of memory", rec.jobID, spec.ID)
	case (state == "FAILED" || state == "COMPLETED") && len(rec.exits) == 0 && !rec.aborted:
		// The batch script ended before it started anything.
		st.StartError = "the Slurm job's batch script failed before it started the processes: " + batchTail(b.attemptDir(spec.ID))
	}
}

// batchTail is the end of what the batch script wrote, for a message.
func batchTail(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, batchLog))
	if err != nil {
		return "(no output: " + err.Error() + ")"
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}
