package slurm

import "testing"

func TestPendingReasonsReadAsWords(t *testing.T) {
	for _, c := range []struct{ code, reason, text string }{
		{"None", "Pending", "the scheduler has not looked at it yet"},
		{"", "Pending", "Slurm gives no reason"},
		{"Priority", "Priority", "jobs of higher priority are ahead of it in the partition"},
		{"QOSMaxJobsPerUserLimit", "QOSMaxJobsPerUserLimit", "a limit of its account or QOS holds it (QOSMaxJobsPerUserLimit)"},
		{"Licenses", "Licenses", "Slurm's reason is Licenses"},
	} {
		if got := queueReason(c.code); got != c.reason {
			t.Errorf("queueReason(%q) = %q, want %q", c.code, got, c.reason)
		}
		if got := pendingText(c.code); got != c.text {
			t.Errorf("pendingText(%q) = %q, want %q", c.code, got, c.text)
		}
	}
}
