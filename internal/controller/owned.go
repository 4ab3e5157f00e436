package controller

import apiv1 "kiln.dev/kiln/api/v1alpha1"

// Owned returns the runs this engine works on now, for a caller to tell
// the runs a claim took over from those it already had.
func (c *Controller) Owned() map[apiv1.RunID]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[apiv1.RunID]bool, len(c.runs))
	for id := range c.runs {
		out[id] = true
	}
	return out
}
