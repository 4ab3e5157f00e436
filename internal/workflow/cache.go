package workflow

import apiv1 "kiln.dev/kiln/api/v1alpha1"

// cache compiles a task's cache policy. Only a task whose own process
// decides its result can be cached: a command, a training job, or a
// map's items (each item is cached on its own).
func (c *checker) cache(field string, t *apiv1.Task, out *Task) {
	if t.Cache == nil {
		return
	}
	f := field + ".cache"
	if t.Gate != nil || t.Workflow != nil || t.Dynamic != nil || t.Sensor != nil {
		c.addHint(apiv1.CodeInvalidValue, f, "set cache on the tasks that run processes: a command, a training job or a map's items",
			"cache does not apply to a gate, sensor, subworkflow or dynamic task")
		return
	}
	out.Cache = &Cache{Version: t.Cache.Version, MaxAge: c.duration(f+".maxAge", t.Cache.MaxAge)}
}
