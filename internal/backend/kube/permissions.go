package kube

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Permissions are the RBAC rules the backend needs in its namespace when
// it creates PodGroups for gangScheduler ("" for none): every verb it
// uses on every resource, and nothing more. It reads and writes nothing
// outside its namespace, so a Role grants them all. The Role in
// deploy/kubernetes grants exactly these (a test there checks it); a
// change to what the backend calls must change this table too.
func Permissions(gangScheduler string) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{
		// Launch and Join create them, the informer lists and watches
		// them, an engine adopting a whole gang reads a missing one
		// (vanished), settle and stopEarlier delete some, Abort, Release
		// and RemoveRun delete an attempt's or a run's by label, Release
		// marks them for the janitor (patch).
		core("pods", "create", "delete", "deletecollection", "get", "list", "patch", "watch"),
		// Logs reads them.
		core("pods/log", "get"),
		// Files and status records: created by Launch and writeRecord,
		// watched by the informer, read back when another engine wrote
		// the record first, deleted by label.
		core("configmaps", "create", "deletecollection", "get", "list", "watch"),
		// A task's secret env: created by Launch, deleted by label.
		core("secrets", "create", "deletecollection"),
		// A gang's headless Service: created by Launch (and by an engine
		// that adopts a gang), read when it adopts one with pods
		// missing (vanished), listed and deleted by label.
		core("services", "create", "delete", "get", "list"),
		// A training job's workspace: created by Launch, deleted with
		// its run.
		core("persistentvolumeclaims", "create", "deletecollection"),
	}
	if gvr, ok := podGroupResources[gangScheduler]; ok {
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{gvr.Group}, Resources: []string{gvr.Resource},
			Verbs: []string{"create", "deletecollection"},
		})
	}
	return rules
}

// KueuePermissions are the rules the backend needs, beyond Permissions,
// to have Kueue admit the attempts whose tasks name a queue: its
// Workloads in its namespace (created by Launch, watched by an informer,
// read back by an engine that adopts an attempt, marked Finished through
// their status, deleted by label) and, cluster-wide, the ResourceFlavors
// whose node labels the admitted pods get. Without them, tasks that name
// no queue run as before (deleting Workloads by label is then skipped).
func KueuePermissions() (namespaced, cluster []rbacv1.PolicyRule) {
	group := []string{"kueue.x-k8s.io"}
	return []rbacv1.PolicyRule{
			{APIGroups: group, Resources: []string{"workloads"}, Verbs: []string{"create", "deletecollection", "get", "list", "watch"}},
			{APIGroups: group, Resources: []string{"workloads/status"}, Verbs: []string{"update"}},
		}, []rbacv1.PolicyRule{
			{APIGroups: group, Resources: []string{"resourceflavors"}, Verbs: []string{"get"}},
		}
}

func core(resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: verbs}
}

// Grants lists rules as "group/resource" to its sorted verbs, so that two
// sets of rules that grant the same compare equal however they are
// written (a Role's YAML beside this table, or the requests recorded).
func Grants(rules []rbacv1.PolicyRule) map[string][]string {
	out := map[string][]string{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				k := g + "/" + res
				out[k] = append(out[k], r.Verbs...)
				slices.Sort(out[k])
				out[k] = slices.Compact(out[k])
			}
		}
	}
	return out
}
