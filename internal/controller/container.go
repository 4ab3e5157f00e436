package controller

import (
	"encoding/json"

	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/workflow"
)

// container is what a container backend needs to run task t: its image,
// what each of its pods asks for, and its pod template.
func container(t *workflow.Task) job.Container {
	c := job.Container{Image: t.Image}
	r := t.Request
	if t.Train != nil {
		r = t.Train.PerNode
		c.ScheduleTimeout = t.Train.ScheduleTimeout
	}
	c.MilliCPU, c.Memory, c.GPU = r.MilliCPU, r.Memory, r.GPU
	if t.PodTemplate != nil {
		// A template decoded from JSON always encodes again.
		c.PodTemplate, _ = json.Marshal(t.PodTemplate)
	}
	return c
}
