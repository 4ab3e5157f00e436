package slurm

import (
	"context"
	"strings"

	"kiln.dev/kiln/internal/job"
)

// slurmJob is one Slurm job of the backend's, as squeue or sacct shows it.
type slurmJob struct {
	ID      string
	Name    string
	State   string // PENDING, RUNNING, COMPLETED, NODE_FAIL, ...
	Reason  string // why it is pending ("Resources", "Priority"), or None
	Comment string
}

// squeueFormat is what squeue prints of a job: the fields of slurmJob,
// '|'-separated (no field of the backend's own jobs holds a '|').
const squeueFormat = "%i|%j|%T|%r|%k"

func parseJobs(out string) []slurmJob {
	var jobs []slurmJob
	for line := range strings.Lines(out) {
		f := strings.SplitN(strings.TrimRight(line, "\n"), "|", 5)
		if len(f) < 5 {
			continue
		}
		jobs = append(jobs, slurmJob{ID: f[0], Name: f[1], State: f[2], Reason: f[3], Comment: f[4]})
	}
	return jobs
}

// pending reports whether the job waits for an allocation.
func (j slurmJob) pending() bool { return j.State == "PENDING" || j.State == "REQUEUED" }

// final reports whether the job has ended for good.
func (j slurmJob) final() bool { return finalState(j.State) }

func finalState(s string) bool {
	switch s {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
		"BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE", "SPECIAL_EXIT", "REVOKED":
		return true
	}
	return false
}

// systemState reports whether a job in state s ended because of the
// cluster, not its task: its node failed or was never booted, or a job
// of a higher priority preempted it.
func systemState(s string) bool {
	return s == "NODE_FAIL" || s == "BOOT_FAIL" || s == "PREEMPTED"
}

// jobsOf returns the jobs Slurm still lists (squeue keeps ended ones for
// the cluster's MinJobAge) of attempt id, by its job name, checked
// against the attempt ID in their comment.
func (b *Backend) jobsOf(ctx context.Context, id job.AttemptID) ([]slurmJob, error) {
	out, err := b.command(ctx, "squeue", "-h", "--states=all", "--name="+b.jobName(id), "-o", squeueFormat)
	if err != nil {
		return nil, err
	}
	var mine []slurmJob
	for _, j := range parseJobs(out) {
		if j.Comment == comment(id) {
			mine = append(mine, j)
		}
	}
	return mine, nil
}

// allJobs returns every job of the backend's that Slurm still lists.
func (b *Backend) allJobs(ctx context.Context) ([]slurmJob, error) {
	out, err := b.command(ctx, "squeue", "-h", "--states=all", "--me", "-o", squeueFormat)
	if err != nil {
		return nil, err
	}
	var mine []slurmJob
	for _, j := range parseJobs(out) {
		if strings.HasPrefix(j.Name, b.cfg.Prefix+".") && strings.HasPrefix(j.Comment, commentPrefix) {
			mine = append(mine, j)
		}
	}
	return mine, nil
}

// accounted asks sacct how job id ended, for a job squeue no longer
// lists. It returns "" where the cluster keeps no accounting (sacct then
// fails: "Slurm accounting storage is disabled").
func (b *Backend) accounted(ctx context.Context, id string) string {
	out, err := b.command(ctx, "sacct", "-n", "-P", "-X", "-j", id, "-o", "JobIDRaw,State")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(out) {
		f := strings.SplitN(strings.TrimSpace(line), "|", 2)
		if len(f) == 2 && f[0] == id {
			state, _, _ := strings.Cut(f[1], " ") // "CANCELLED by 0"
			return state
		}
	}
	return ""
}

// commentPrefix starts the comment of every job of the backend's.
const commentPrefix = "kiln-attempt="

// comment is the Slurm job comment of attempt id.
func comment(id job.AttemptID) string { return commentPrefix + id.String() }

// attemptOf returns the attempt a job of the backend's runs.
func attemptOf(j slurmJob) (job.AttemptID, bool) {
	s, ok := strings.CutPrefix(j.Comment, commentPrefix)
	if !ok {
		return job.AttemptID{}, false
	}
	id, err := job.ParseAttemptID(s)
	return id, err == nil
}
