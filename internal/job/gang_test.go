package job

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	t.Parallel()

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ok := func(name string, s int) Member { return Member{Name: name, Ended: true, FinishedAt: at(s)} }
	exit := func(name string, code, s int) Member {
		return Member{Name: name, Ended: true, Exit: code, FinishedAt: at(s)}
	}
	stopped := func(name string, s int) Member {
		return Member{Name: name, Ended: true, Exit: -1, Signal: "terminated", Stopped: true, FinishedAt: at(s)}
	}
	running := func(name string) Member { return Member{Name: name} }

	cases := map[string]struct {
		members []Member
		leader  string
		want    Outcome
	}{
		"a gang still running is undecided": {
			members: []Member{ok("node-0", 1), running("node-1")},
			want:    Outcome{},
		},
		"every member exited 0": {
			members: []Member{ok("node-0", 1), ok("node-1", 2)},
			want:    Outcome{Decided: true},
		},
		"the first failure decides while others still run": {
			members: []Member{running("node-0"), exit("node-1", 3, 2)},
			want:    Outcome{Decided: true, Decider: "node-1", ExitCode: 3, Failed: true},
		},
		"the earliest failure by time decides, not the first listed": {
			members: []Member{exit("node-0", 1, 5), exit("node-1", 2, 3)},
			want:    Outcome{Decided: true, Decider: "node-1", ExitCode: 2, Failed: true},
		},
		"members stopped after a failure decide nothing": {
			members: []Member{stopped("node-0", 4), exit("node-1", 7, 5), stopped("node-2", 4)},
			want:    Outcome{Decided: true, Decider: "node-1", ExitCode: 7, Failed: true},
		},
		"a leader that ended decides while the others run": {
			members: []Member{ok("chief-0", 3), running("ps-0")},
			leader:  "chief-0",
			want:    Outcome{Decided: true, Decider: "chief-0"},
		},
		"a leader that succeeded before a member failed decides": {
			members: []Member{ok("chief-0", 3), exit("ps-0", 1, 4)},
			leader:  "chief-0",
			want:    Outcome{Decided: true, Decider: "chief-0"},
		},
		"a worker that fails before the leader ends fails the gang": {
			members: []Member{running("chief-0"), exit("worker-0", 1, 2)},
			leader:  "chief-0",
			want:    Outcome{Decided: true, Decider: "worker-0", ExitCode: 1, Failed: true},
		},
		"a leader stopped because a worker failed does not decide": {
			members: []Member{stopped("chief-0", 3), exit("worker-0", 1, 2)},
			leader:  "chief-0",
			want:    Outcome{Decided: true, Decider: "worker-0", ExitCode: 1, Failed: true},
		},
		"a failed leader decides": {
			members: []Member{exit("launcher", 2, 2)},
			leader:  "launcher",
			want:    Outcome{Decided: true, Decider: "launcher", ExitCode: 2, Failed: true},
		},
		"a lost member fails the gang even under a leader": {
			members: []Member{running("chief-0"), {Name: "worker-0", Ended: true, Exit: -1, Lost: true, FinishedAt: at(1)}},
			leader:  "chief-0",
			want:    Outcome{Decided: true, Decider: "worker-0", ExitCode: -1, Failed: true, Lost: true},
		},
		"a killed member fails by its signal": {
			members: []Member{{Name: "", Ended: true, Exit: -1, Signal: "killed", FinishedAt: at(1)}},
			want:    Outcome{Decided: true, ExitCode: -1, Signal: "killed", Failed: true},
		},
		"an aborted gang ends stopped": {
			members: []Member{stopped("node-0", 2), stopped("node-1", 1)},
			want:    Outcome{Decided: true, Decider: "node-1", ExitCode: -1, Signal: "terminated", Stopped: true},
		},
		"an aborted leader ends its gang stopped": {
			members: []Member{stopped("launcher", 2)},
			leader:  "launcher",
			want:    Outcome{Decided: true, Decider: "launcher", ExitCode: -1, Signal: "terminated", Stopped: true},
		},
		"no members is undecided": {
			want: Outcome{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, Decide(tc.members, Rule{Leader: tc.leader})); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideElastic(t *testing.T) {
	t.Parallel()

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ok := func(host, s int) Member {
		return Member{Name: "node-" + string(rune('0'+host)), Host: host, Ended: true, FinishedAt: at(s)}
	}
	killed := func(host, s int) Member {
		m := ok(host, s)
		m.Exit, m.Signal = -1, "killed"
		return m
	}
	running := func(host int) Member { return Member{Name: "node-" + string(rune('0'+host)), Host: host} }

	cases := map[string]struct {
		members  []Member
		minHosts int
		want     Outcome
	}{
		"a node lost above the minimum leaves the gang running": {
			members:  []Member{running(0), running(1), killed(2, 1)},
			minHosts: 2,
			want:     Outcome{Dropped: []string{"node-2"}},
		},
		"the survivors exiting 0 make it a success": {
			members:  []Member{ok(0, 5), ok(1, 5), killed(2, 1)},
			minHosts: 2,
			want:     Outcome{Decided: true, Dropped: []string{"node-2"}},
		},
		"the loss that leaves fewer than the minimum decides": {
			members:  []Member{running(0), killed(1, 3), killed(2, 1)},
			minHosts: 2,
			want:     Outcome{Decided: true, Decider: "node-1", ExitCode: -1, Signal: "killed", Failed: true, Dropped: []string{"node-2"}},
		},
		"a gang at its minimum fails at its first loss": {
			members:  []Member{running(0), killed(1, 1)},
			minHosts: 2,
			want:     Outcome{Decided: true, Decider: "node-1", ExitCode: -1, Signal: "killed", Failed: true},
		},
		"a lost pod counts as a lost node": {
			members:  []Member{running(0), running(1), {Name: "node-2", Host: 2, Ended: true, Exit: -1, Lost: true, FinishedAt: at(1)}},
			minHosts: 1,
			want:     Outcome{Dropped: []string{"node-2"}},
		},
		"losing the first node, which holds the rendezvous, decides above the minimum too": {
			members:  []Member{killed(0, 1), running(1), running(2)},
			minHosts: 1,
			want:     Outcome{Decided: true, Decider: "node-0", ExitCode: -1, Signal: "killed", Failed: true},
		},
		"a loss outlived before the first node's is still dropped": {
			members:  []Member{killed(0, 2), running(1), killed(2, 1)},
			minHosts: 1,
			want:     Outcome{Decided: true, Decider: "node-0", ExitCode: -1, Signal: "killed", Failed: true, Dropped: []string{"node-2"}},
		},
		"without a minimum the first loss decides": {
			members: []Member{running(0), running(1), killed(2, 1)},
			want:    Outcome{Decided: true, Decider: "node-2", ExitCode: -1, Signal: "killed", Failed: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, Decide(tc.members, Rule{MinHosts: tc.minHosts})); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}
