package job

import (
	"slices"
	"time"
)

// Member is how one process of a gang stands, as its backend saw it.
type Member struct {
	// Name is the process's name in the spec.
	Name string
	// Host is the process's host index in the spec.
	Host int
	// Ended is set once the process is gone.
	Ended bool
	// Exit is its exit code; -1 when a signal ended it or it never ran.
	Exit int
	// Signal names the signal that ended it, if one did.
	Signal string
	// Stopped is set when the backend ended it: on request, or because the
	// gang was already decided. A stopped member's end decides nothing.
	Stopped bool
	// Lost is set when the process's machine went away under it (an
	// evicted or vanished pod): the gang fails, whatever its leader does.
	Lost bool
	// FinishedAt orders the members' ends: the first failure decides.
	FinishedAt time.Time
}

// failed reports whether m ended badly on its own.
func (m *Member) failed() bool {
	return m.Ended && !m.Stopped && (m.Exit != 0 || m.Signal != "" || m.Lost)
}

// Outcome is how a gang ended, or that it has not yet.
type Outcome struct {
	// Decided is set once the gang's end is known. The backend then stops
	// the members still running: a gang lives and dies as one.
	Decided bool
	// Decider names the member whose end decided; empty when every member
	// exited 0 and there is no leader.
	Decider string
	// ExitCode and Signal are the decider's; 0 and "" on success.
	ExitCode int
	Signal   string
	// Failed is set when the decider failed on its own.
	Failed bool
	// Stopped is set when the decider was stopped by the backend: the gang
	// was aborted, not failed.
	Stopped bool
	// Lost is set when the decider's machine went away.
	Lost bool
	// Dropped names the members of an elastic gang whose failure it
	// outlived, in the order they ended.
	Dropped []string
}

// Rule is what, beside its members, decides how a gang ends: a job.Spec's
// Leader and MinHosts.
type Rule struct {
	// Leader names the member whose end decides, if any.
	Leader string
	// MinHosts, above 0, makes the gang elastic: see Spec.MinHosts.
	MinHosts int
}

// RuleOf returns spec's rule.
func RuleOf(spec *Spec) Rule { return Rule{Leader: spec.Leader, MinHosts: spec.MinHosts} }

// Decide says how a gang ended from how its members stand. It is the one
// rule every backend applies, a pure function of its input:
//
//  1. The first member to fail, by finish time, decides: the gang failed.
//     A member the backend stopped never counts as failing. Only a leader
//     that had already ended on its own, before that failure, overrides it.
//  2. Otherwise a leader that ended decides (MPI's launcher, TensorFlow's
//     chief), whatever the others are doing; they are stopped.
//  3. Otherwise, once every member ended, the gang succeeded, or, if the
//     backend stopped members, it ended stopped.
//  4. Otherwise it is still running.
//
// An elastic gang (MinHosts above 0) outlives failures, taken in the
// order they ended, while hosts with no failed member number at least
// MinHosts: those failures count as none above, and Outcome.Dropped names
// them. The failure that leaves fewer hosts decides, and so does any
// failure on host 0, which holds the rendezvous the others meet at.
func Decide(members []Member, rule Rule) Outcome {
	leader := rule.Leader
	drop := dropped(members, rule.MinHosts)
	var first, lead, stopped *Member
	ended := 0
	for i := range members {
		m := &members[i]
		if m.Ended {
			ended++
		}
		if m.failed() && !slices.Contains(drop, m.Name) && (first == nil || m.FinishedAt.Before(first.FinishedAt)) {
			first = m
		}
		if m.Ended && m.Stopped && (stopped == nil || m.FinishedAt.Before(stopped.FinishedAt)) {
			stopped = m
		}
		if leader != "" && m.Name == leader {
			lead = m
		}
	}
	leaderFirst := lead != nil && lead.Ended && !lead.Stopped && (first == nil || lead.FinishedAt.Before(first.FinishedAt))
	var out Outcome
	switch {
	case first != nil && !leaderFirst:
		out = outcomeOf(first)
	case lead != nil && lead.Ended:
		out = outcomeOf(lead)
	case ended < len(members) || len(members) == 0:
	case stopped != nil:
		out = outcomeOf(stopped)
	default:
		out = Outcome{Decided: true}
	}
	out.Dropped = drop
	return out
}

// dropped returns the members whose failure an elastic gang of at least
// minHosts hosts outlives: by the order they ended, each failure while
// the hosts with no failed member still number minHosts or more.
func dropped(members []Member, minHosts int) []string {
	if minHosts <= 0 {
		return nil
	}
	hosts, dead := map[int]bool{}, map[int]bool{}
	var failed []*Member
	for i := range members {
		hosts[members[i].Host] = true
		if members[i].failed() {
			failed = append(failed, &members[i])
		}
	}
	slices.SortStableFunc(failed, func(a, b *Member) int { return a.FinishedAt.Compare(b.FinishedAt) })
	var out []string
	for _, m := range failed {
		dead[m.Host] = true
		if m.Host == 0 || len(hosts)-len(dead) < minHosts {
			break // host 0 holds the rendezvous: without it no one meets again
		}
		out = append(out, m.Name)
	}
	return out
}

func outcomeOf(m *Member) Outcome {
	return Outcome{
		Decided: true, Decider: m.Name, ExitCode: m.Exit, Signal: m.Signal,
		Failed: m.failed(), Stopped: m.Stopped, Lost: m.Lost,
	}
}
