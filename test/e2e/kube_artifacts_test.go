package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact/artifacttest"
)

// processKubelet plays a kubelet that really runs each pod's first
// container as a local process: the pod's command and environment, the
// Secret's values for its secretKeyRefs, and its mounts (outputs, kiln's
// binary, the termination message) mapped to this machine's paths, each
// pod with an outputs directory of its own. The termination message it
// reports is the one the process wrote.
func processKubelet(ctx context.Context, t *testing.T, c *cluster) {
	done := map[string]bool{}
	for ctx.Err() == nil {
		l, err := c.cs.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, p := range l.Items {
			if p.Status.Phase != corev1.PodRunning || done[p.Name] || len(p.Status.ContainerStatuses) == 0 {
				continue
			}
			done[p.Name] = true
			code, msg := runPodLocally(ctx, t, c, &p)
			p.Status.Phase = corev1.PodSucceeded
			if code != 0 {
				p.Status.Phase = corev1.PodFailed
			}
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: int32(code), Reason: "Completed", Message: msg, FinishedAt: metav1.Now(),
			}}
			if _, err := c.cs.CoreV1().Pods(c.ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
				done[p.Name] = false
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func runPodLocally(ctx context.Context, t *testing.T, c *cluster, p *corev1.Pod) (int, string) {
	ct := p.Spec.Containers[0]
	outputs, term := t.TempDir(), filepath.Join(t.TempDir(), "termination-log")
	mapPath := func(s string) string {
		s = strings.ReplaceAll(s, corev1.TerminationMessagePathDefault, term)
		s = strings.ReplaceAll(s, "/kiln/bin/kiln", kilnBin)
		return strings.ReplaceAll(s, "/kiln/outputs", outputs)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range ct.Env {
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			s, err := c.cs.CoreV1().Secrets(c.ns).Get(ctx, r.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("pod %s: Secret %s: %v", p.Name, r.SecretKeyRef.Name, err)
				return 1, ""
			}
			env = append(env, e.Name+"="+string(s.Data[r.SecretKeyRef.Key]))
			continue
		}
		env = append(env, e.Name+"="+mapPath(e.Value))
	}
	argv := make([]string, len(ct.Command))
	for i, a := range ct.Command {
		argv[i] = mapPath(a)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("pod %s: %q: %v\n%s", p.Name, argv, err, out)
		return 1, ""
	}
	msg, _ := os.ReadFile(term)
	return 0, string(msg)
}

// A pipeline on the kubernetes backend with artifacts.s3: make's pod
// stores its model in the bucket (the run records its digest), and use's
// pod, whose outputs directory is its own, gets it fetched by its
// wrapper before its command reads it. The keys never appear in a pod.
func TestKubeArtifactsThroughS3(t *testing.T) {
	s3 := artifacttest.S3Config(t)
	c := newCluster(t)
	home := c.home(t)
	cfg, err := os.ReadFile(filepath.Join(home, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg = append(cfg, fmt.Sprintf("  kilnImage: registry.example/kiln:test\nartifacts:\n  s3: {endpoint: %q, bucket: %s, prefix: %q, region: us-east-1, secret: s3-keys}\n",
		s3.Endpoint, s3.Bucket, s3.Prefix)...)
	writeFile(t, home, "config.yaml", string(cfg))
	if r := kilnStdin(t, nil, home, s3.AccessKey+":"+s3.SecretKey, "secret", "set", "s3-keys"); r.code != 0 {
		t.Fatalf("secret set: %s %s", r.stdout, r.stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go processKubelet(ctx, t, c)
	wf := writeFile(t, t.TempDir(), "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: s3-pods}
spec:
  image: busybox:1.36
  tasks:
  - name: make
    command: [sh, -c, 'echo weights > {{outputs.dir}}/model.bin']
    outputs:
      artifacts: [{name: model, path: model.bin}]
  - name: use
    dependsOn: [make]
    command: [sh, -c, 'test "$(cat {{tasks.make.outputs.artifacts.model}})" = weights']
`)
	r := kiln(t, home, "run", wf, "-q")
	id := newestRun(t, home)
	run := describe(t, home, id)
	if r.code != 0 || run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run = exit %d, %s: %s %s", r.code, run.Status.Phase, r.stdout, r.stderr)
	}
	sum := sha256.Sum256([]byte("weights\n"))
	var model *apiv1.CachedArtifact
	for _, n := range run.Status.Nodes {
		if n.Name == "make" && len(n.Artifacts) == 1 {
			model = &n.Artifacts[0]
		}
	}
	if model == nil || model.Digest != "sha256:"+hex.EncodeToString(sum[:]) || model.Size != 8 {
		t.Fatalf("make's artifacts recorded as %+v, want model.bin's digest", model)
	}
	out := filepath.Join(t.TempDir(), "model.bin")
	if r := kiln(t, home, "artifacts", "get", string(id), "make/model", "-o", out); r.code != 0 {
		t.Fatalf("artifacts get = exit %d: %s", r.code, r.stderr)
	}
	for _, p := range c.pods(t, id) {
		raw := fmt.Sprint(p.Spec)
		if strings.Contains(raw, s3.SecretKey) || strings.Contains(raw, s3.AccessKey) {
			t.Errorf("pod %s holds the bucket's keys", p.Name)
		}
	}
}
