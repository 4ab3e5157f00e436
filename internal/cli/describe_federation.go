package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// writeFederation writes describe's header lines of a federated run or
// of a party's part of one: who initiated it, which parties fill which
// roles and, on a part, the run it is a part of and as which party.
func writeFederation(w io.Writer, f *apiv1.FederationInfo) {
	if f == nil {
		return
	}
	if f.Part {
		fmt.Fprintf(w, "Part of:   %s\n", partOfLine(f))
	}
	fmt.Fprintf(w, "Federated: initiated by %s; %s\n", f.Initiator, rolesLine(f.Roles))
}

// partOfLine is `run R (initiated by alice) as party bob`.
func partOfLine(f *apiv1.FederationInfo) string {
	return fmt.Sprintf("run %s (initiated by %s) as party %s", f.Run, f.Initiator, f.Party)
}

// rolesLine is `guest: alice; host: bob, dave; arbiter: carol`, the roles
// in the order of roleOrder.
func rolesLine(roles map[string][]string) string {
	parts := make([]string, 0, len(roles))
	for _, role := range roleOrder(roles) {
		parts = append(parts, role+": "+strings.Join(roles[role], ", "))
	}
	if len(parts) == 0 {
		return "no roles"
	}
	return strings.Join(parts, "; ")
}

// roleOrder lists the roles as FATE does, guest, host then arbiter, then
// any other role by name.
func roleOrder(roles map[string][]string) []string {
	rank := func(r string) int {
		if i := slices.Index([]string{"guest", "host", "arbiter"}, r); i >= 0 {
			return i
		}
		return 3
	}
	return slices.SortedFunc(maps.Keys(roles), func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
}

// shares adds a line under federated node n for each party's share:
// `alice as guest`, its state, attempt, code, and where it listens and
// why it is where it is.
func (nt *nodeTable) shares(n *apiv1.NodeStatus, depth int) {
	indent := strings.Repeat("  ", depth+1)
	for _, s := range n.Parties {
		attempt := ""
		if s.Attempt > 0 {
			attempt = "#" + strconv.Itoa(s.Attempt)
		}
		nt.t.row(indent+s.Party+" as "+s.Role, s.State, attempt, "", "", string(s.Code), shareMessage(n.Name, s))
	}
}

// shareMessage is the MESSAGE cell of share s of task: where it listens,
// its task at the party when that is not task's name, when the party was
// last heard from if it is unreachable, then its message.
func shareMessage(task string, s apiv1.PartyShare) string {
	var notes []string
	if s.Address != "" {
		notes = append(notes, "at "+s.Address)
	}
	if s.Task != "" && s.Task != task {
		notes = append(notes, "task "+s.Task)
	}
	if s.State == apiv1.ShareUnreachable && s.SeenAt != nil {
		notes = append(notes, "last heard "+clock(*s.SeenAt))
	}
	msg := strings.Join(notes, ", ")
	if m := oneLine(s.Message); m != "" {
		msg = strings.TrimPrefix(msg+": "+m, ": ")
	}
	return msg
}

// shareOf is the note under a task of a party's part: which federated
// task and role it is a share of; "" for a task of any other run.
func shareOf(f *apiv1.FederationInfo, name string) string {
	if f == nil || !f.Part {
		return ""
	}
	for _, s := range f.Shares {
		if s.Name == name {
			return fmt.Sprintf("share of: task %s as %s", s.Task, s.Role)
		}
	}
	return ""
}

// runName is the NAME cell of get runs: a federated run's name is marked
// `(federated)`, a party's part's `(part, from INITIATOR)`.
func runName(r *apiv1.Run) string {
	switch f := r.Federation; {
	case f == nil:
		return r.Name
	case f.Part:
		return r.Name + " (part, from " + f.Initiator + ")"
	}
	return r.Name + " (federated)"
}
