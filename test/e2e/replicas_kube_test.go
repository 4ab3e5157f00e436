package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store/pgtest"
)

// kubeChain is a run of n pods one after another, each running 3s.
func kubeChain(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata:\n  name: kchain\nspec:\n  image: busybox:1.36\n" +
		"  podTemplate:\n    metadata:\n      annotations: {kwok.kiln.dev/exit-code: \"0\", kwok.kiln.dev/delay: 3s}\n  tasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: t%d\n    command: [sh, -c, 'echo %d']\n    resources: {cpu: 100m, memory: 16Mi}\n", i, i)
		if i > 0 {
			fmt.Fprintf(&b, "    dependsOn: [t%d]\n", i-1)
		}
	}
	return b.String()
}

// TestReplicasOnKubernetesAdoptPodsFromTheCluster runs two replicas, each
// with a home of its own (as on two machines), on one PostgreSQL and the
// test cluster; the leader is killed twice while pods run, and each time
// the other adopts the runs from the cluster: every run succeeds, every
// task with one attempt, one pod.
func TestReplicasOnKubernetesAdoptPodsFromTheCluster(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	dsn := pgtest.Start(t).NewDatabase(t)
	config := fmt.Sprintf("backend: kubernetes\nkubernetes:\n  kubeconfig: %s\n  namespace: %s\n  unschedulableTimeout: 60s\n", c.kubeconfig, c.ns)
	rs := startReplicas(t, dsn, 2, replicaOptions{ownHomes: true, config: config})
	_, term := rs.leader(t, 0)
	const tasks = 6
	ids := submitAll(t, rs, kubeChain(tasks), 4)
	for k := range 2 {
		pause(t, 4*time.Second)
		lead, _ := rs.leader(t, 0)
		killed := time.Now()
		lead.kill9()
		_, term = rs.leader(t, term)
		t.Logf("kill %d: term %d took over in %s", k+1, term, time.Since(killed))
		rs.start(t, lead)
	}
	waitAllDone(t, rs, ids, 3*time.Minute)
	for _, id := range ids {
		run, err := rs.any(0).GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range run.Status.Nodes {
			if len(n.Attempts) != 1 {
				t.Errorf("run %s task %s has %d attempts, want 1: %+v", id, n.Name, len(n.Attempts), n.Attempts)
			}
		}
		if pods := c.pods(t, id); len(pods) != tasks {
			t.Errorf("run %s made %d pods, want %d (one per task)", id, len(pods), tasks)
		}
		if run.Status.Phase != apiv1.PhaseSucceeded {
			t.Errorf("run %s is %s", id, run.Status.Phase)
		}
	}
}
