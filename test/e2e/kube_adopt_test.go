package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A rank's pod deleted while kiln is down fails the attempt when kiln
// resumes (KLN-6009), as it does while kiln runs: it is never created
// again into the rendezvous its gang had formed.
func TestKubePodDeletedWhileKilnWasDownFailsTheAttempt(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "forever.yaml", foreverGang))
	id := newestRun(t, home)
	waitPods(t, c, id, 4)
	killNine(t, cmd)

	lost := string(id) + "-trainer-1-2"
	zero := int64(0)
	if err := c.cs.CoreV1().Pods(c.ns).Delete(context.Background(), lost, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	podNames := func() []string {
		var out []string
		for _, p := range c.pods(t, id) {
			out = append(out, p.Name)
		}
		return out
	}
	waitFor(t, "the pod to be gone", func() bool { return !slices.Contains(podNames(), lost) })

	resumed := startKiln(t, home, "resume", string(id))
	t.Cleanup(func() { _ = resumed.Process.Kill() }) // if the test fails first
	var first apiv1.AttemptStatus
	waitFor(t, "the adopted attempt to end", func() bool {
		run := describe(t, home, id)
		if len(run.Status.Nodes) == 0 || len(run.Status.Nodes[0].Attempts) == 0 {
			return false
		}
		first = run.Status.Nodes[0].Attempts[0]
		return first.Phase.Done()
	})
	if first.Phase != apiv1.PhaseFailed || first.Code != apiv1.CodePodLost || !strings.Contains(first.Message, lost) {
		t.Errorf("attempt 1 ended %s %s %q, want Failed %s naming %s", first.Phase, first.Code, first.Message, apiv1.CodePodLost, lost)
	}
	waitFor(t, "attempt 1's other pods to be stopped", func() bool {
		return !slices.ContainsFunc(podNames(), func(n string) bool { return strings.HasPrefix(n, string(id)+"-trainer-1-") })
	})
	_ = resumed.Wait()
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseFailed || len(run.Status.Nodes[0].Attempts) != 1 {
		t.Errorf("run %s with %d attempts, want it Failed with the adopted attempt only", run.Status.Phase, len(run.Status.Nodes[0].Attempts))
	}
}
