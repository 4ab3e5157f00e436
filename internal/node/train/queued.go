package train

import (
	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
)

// placement shows a running gang that waits for the cluster to place some
// of its pods as Queued, with the scheduler's reason, and those processes
// as Pending rather than Active; once all are placed, Running again.
func placement(ns *apiv1.NodeStatus, c node.Change) {
	switch {
	case c.Queue != nil:
		waiting := map[string]int{}
		for _, p := range c.Queue.Processes {
			waiting[replicaGroup(p)]++
		}
		for k := range ns.Replicas {
			g := &ns.Replicas[k]
			launched := g.Active + g.Pending
			g.Pending = min(waiting[g.Name], launched)
			g.Active = launched - g.Pending
		}
		setCondition(ns, apiv1.ConditionQueued, "True", c.Queue.Reason, c.Queue.Message, c.Time)
		if hasCondition(ns, apiv1.ConditionRunning) {
			setCondition(ns, apiv1.ConditionRunning, "False", c.Reason, c.Message, c.Time)
		}
	case c.Placed:
		for k := range ns.Replicas {
			g := &ns.Replicas[k]
			g.Active, g.Pending = g.Active+g.Pending, 0
		}
		setCondition(ns, apiv1.ConditionQueued, "False", c.Reason, c.Message, c.Time)
		setCondition(ns, apiv1.ConditionRunning, "True", c.Reason, c.Message, c.Time)
	}
}
