package e2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A pod the API server refuses as invalid can never be created, however
// often it is tried: its attempt fails at once, permanently (its retries
// unspent), with KLN-6025 and the API server's own words, and the objects
// made before the pod (the task's secret) are removed.
func TestKubeRefusedPodFailsItsTaskOnce(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	if r := kilnStdin(t, nil, home, "s3cret", "secret", "set", "token"); r.code != 0 {
		t.Fatalf("kiln secret set: %d\n%s", r.code, r.stderr)
	}
	wf := writeFile(t, t.TempDir(), "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: refused}
spec:
  image: busybox:1.36
  tasks:
  - name: bad
    retries: {limit: 3}
    env: [{name: TOKEN, valueFrom: {secret: token}}]
    podTemplate:
      spec:
        nodeSelector: {type: "not a valid value!"}
    command: [echo, hi]
`)
	r := kiln(t, home, "run", wf)
	if r.code == 0 || !strings.Contains(r.stdout, "KLN-6025") {
		t.Fatalf("kiln run of a task whose pod is invalid exited %d, want a failure with KLN-6025:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := newestRun(t, home)
	run := describe(t, home, id)
	bad := nodeOf(t, &run, "bad")
	if run.Status.Phase != apiv1.PhaseFailed || bad.Phase != apiv1.PhaseFailed || len(bad.Attempts) != 1 {
		t.Fatalf("run %s, bad %s with %d attempts: want both Failed after one attempt", run.Status.Phase, bad.Phase, len(bad.Attempts))
	}
	words := `spec.nodeSelector: Invalid value: "not a valid value!"`
	if a := bad.Attempts[0]; a.Code != apiv1.CodeLaunchRefused || !strings.Contains(a.Message, words) {
		t.Errorf("the attempt ended %s %q, want %s with the API server's %q", a.Code, a.Message, apiv1.CodeLaunchRefused, words)
	}
	text := kiln(t, home, "describe", "run", string(id))
	if !strings.Contains(text.stdout, "KLN-6025") || !strings.Contains(text.stdout, words) {
		t.Errorf("kiln describe run does not show the code and the API server's words:\n%s", text.stdout)
	}
	if left := c.leftovers(t, id); len(left) > 0 {
		t.Errorf("the refused attempt left %v", left)
	}
	secrets, err := c.cs.CoreV1().Secrets(c.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kiln.dev/run=" + string(id)})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) > 0 {
		t.Errorf("the refused attempt left its secret %s", secrets.Items[0].Name)
	}
}
