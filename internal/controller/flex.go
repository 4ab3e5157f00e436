package controller

import (
	"fmt"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
)

// A flexible gang (workflow.Task's MinHosts and MaxHosts: an elastic
// training job) asks the pool for MaxHosts hosts and takes as many as
// fit, down to MinHosts. The attempt records how many it got (Nodes), how
// many joined later (Joined, grow.go) and which it lost (Dropped), so a
// restarted engine rebuilds the same spec and holds the room of the hosts
// it has now. The engine knows hosts and resources, never why a gang is
// flexible.

// hostsAdmitted is how many hosts node i's attempt gets when admission
// took steps hosts off its claim; 0 for a gang taken whole.
func (rs *runState) hostsAdmitted(i, steps int) int {
	t := &rs.plan.Tasks[i]
	if t.MaxHosts <= 0 {
		return 0
	}
	return t.MaxHosts - steps
}

// heldClaim is node i's claim for its current attempt as it stands: a
// flexible gang's at the hosts it has now (liveHosts).
func (rs *runState) heldClaim(i int) resource.Claim {
	return rs.sizedClaim(i, rs.liveHosts(i))
}

// sizedClaim is node i's claim for its current attempt on hosts hosts (a
// flexible gang; others take their whole request).
func (rs *runState) sizedClaim(i, hosts int) resource.Claim {
	ns := rs.nodes[i]
	c := rs.claim(i, ns.attempt.Number)
	if t := &rs.plan.Tasks[i]; t.MaxHosts > 0 && ns.attempt.Nodes > 0 {
		return c.Sized(t.MaxHosts - max(hosts, 0))
	}
	return c.Sized(0)
}

// liveHosts is how many hosts node i's flexible gang has now: those it
// started with and those that joined, less those it lost.
func (rs *runState) liveHosts(i int) int {
	a := &rs.nodes[i].attempt
	return a.Nodes + a.Joined - len(a.Dropped)
}

// specHosts is how many hosts node i's attempt spec spans: every host it
// started with or that joined (lost ones included); 0 for a gang of the
// node's own size.
func (rs *runState) specHosts(i int) int {
	a := &rs.nodes[i].attempt
	if a.Nodes == 0 {
		return 0
	}
	return a.Nodes + a.Joined
}

// dropped records the processes whose failure node i's gang outlived (an
// elastic gang's lost hosts): on the attempt, and one event each, saying
// which host and how it ended.
func (r *round) dropped(i int, st *job.Status) {
	ns := r.rs.nodes[i]
	for _, name := range st.Dropped {
		if slices.Contains(ns.attempt.Dropped, name) {
			continue
		}
		ns.attempt.Dropped = append(ns.attempt.Dropped, name)
		host := -1
		if ns.spec != nil {
			if k := slices.IndexFunc(ns.spec.Processes, func(p job.Process) bool { return p.Name == name }); k >= 0 {
				host = ns.spec.Processes[k].Host
			}
		}
		r.events = append(r.events, apiv1.Event{
			Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: ns.status.Phase, Reason: "HostLost", Time: r.now,
			Message: fmt.Sprintf("process %s on host %d %s; the gang went on without it", name, host, endedHow(st.Processes[name])),
		})
		r.setAttempt(i)
		if st.State == job.StateRunning && !slices.Contains(r.shrink, i) {
			r.shrink = append(r.shrink, i) // its room goes back once this is saved
		}
	}
}

// endedHow says how a dropped process ended, from its exit code.
func endedHow(code int) string {
	if code < 0 {
		return "was killed"
	}
	return fmt.Sprintf("exited with code %d", code)
}
