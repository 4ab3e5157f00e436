package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// kubelet plays the part of a kubelet for the example's pods: each pod that
// runs ends with exit 0, and prepare reports its output as the real
// command would, through its termination message.
func kubelet(ctx context.Context, c *cluster) {
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
			msg := ""
			if p.Labels["kiln.dev/node"] == "prepare" {
				msg = "rows 4\n1000"
			}
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", Message: msg, FinishedAt: metav1.Now(),
			}}
			if _, err := c.cs.CoreV1().Pods(c.ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err == nil {
				done[p.Name] = true
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestKubeExamplePipeline(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go kubelet(ctx, c)
	r := kiln(t, home, "run", filepath.Join(repoRoot(), "examples", "kubernetes", "pipeline.yaml"))
	if r.code != 0 {
		t.Fatalf("kiln run exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := runID(t, r.stdout)
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run is %s", run.Status.Phase)
	}
	for _, p := range c.pods(t, id) {
		switch p.Labels["kiln.dev/node"] {
		case "train":
			if got := strings.Join(p.Spec.Containers[0].Command, " "); !strings.HasSuffix(got, " 1000") {
				t.Errorf("train did not get prepare's output: %s", got)
			}
		case "evaluate":
			if p.Spec.Containers[0].Image != "busybox:1.36" {
				t.Errorf("evaluate runs %s", p.Spec.Containers[0].Image)
			}
		}
		if p.Labels["team"] != "vision" || p.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
			t.Errorf("pod %s lacks the workflow's podTemplate", p.Name)
		}
	}
}

func TestKubeSecretsStayInASecret(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	const value = "s3cr3t-value-that-must-not-leak"
	set := exec.Command(kilnBin, "--home", home, "secret", "set", "api-key")
	set.Stdin = strings.NewReader(value + "\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("kiln secret set: %v %s", err, out)
	}
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: secretive}
spec:
  image: busybox:1.36
  tasks:
  - name: use
    command: [sh, -c, 'test -n "$API_KEY"']
    env: [{name: API_KEY, valueFrom: {secret: api-key}}, {name: PLAIN, value: visible}]
`))
	id := newestRun(t, home)
	waitPods(t, c, id, 1)
	pod := c.pods(t, id)[0]
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), value) {
		t.Fatal("the secret's value is in the pod object")
	}
	var ref *corev1.SecretKeySelector
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == "API_KEY" && e.ValueFrom != nil {
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil {
		t.Fatalf("API_KEY is not taken from a Secret: %+v", pod.Spec.Containers[0].Env)
	}
	s, err := c.cs.CoreV1().Secrets(c.ns).Get(context.Background(), ref.Name, metav1.GetOptions{})
	if err != nil || string(s.Data[ref.Key]) != value {
		t.Fatalf("the Secret %s does not hold the value (%v)", ref.Name, err)
	}
	if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
		t.Fatal(r.stderr)
	}
	_ = cmd.Wait()
	waitFor(t, "the Secret to go with the attempt", func() bool {
		_, err := c.cs.CoreV1().Secrets(c.ns).Get(context.Background(), ref.Name, metav1.GetOptions{})
		return err != nil
	})
}

func TestKubeServerRunsOnTheCluster(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	base, token, _ := startServe(t, home)
	run := postRun(t, base, token, threeTasks)
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, "the run to succeed on the cluster", func() bool {
		_, body := get("/api/v1/runs/" + string(run.ID))
		var got apiv1.Run
		return json.Unmarshal([]byte(body), &got) == nil && got.Status.Phase == apiv1.PhaseSucceeded
	})
	if n := len(c.pods(t, run.ID)); n != 3 {
		t.Errorf("the server's run made %d pods, want 3", n)
	}
	code, body := get("/api/v1/runs/" + string(run.ID) + "/tasks/train/logs?follow=true")
	if code != http.StatusOK || body != "kwok: line 1 of a container log\nkwok: line 2 of a container log\n" {
		t.Errorf("logs through the API: %d %q", code, body)
	}
}
