package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// podEnd is how the fake kubelet ends a task's pod: its exit code and its
// termination message (kiln's output records: "NAME BYTES\nVALUE").
type podEnd struct {
	exit int32
	msg  string
	hold bool // the pod runs on until it is deleted
}

// nodeName is the name of a pod's task in its run ("os.1", "a.b"), as
// its attempt ID annotation has it (the node label is a DNS label).
func nodeName(p corev1.Pod) string {
	id, err := job.ParseAttemptID(p.Annotations["kiln.dev/attempt-id"])
	if err != nil {
		return ""
	}
	return id.Node
}

// localName is the name of a pod's task within its parent: "1" for the
// second item of map os, "b" for task b of subworkflow a.
func localName(p corev1.Pod) string {
	n := nodeName(p)
	return n[strings.LastIndex(n, ".")+1:]
}

// argoKubelet plays the kubelet for a run's pods, as kubelet does in
// kube_example_test.go: each running pod ends with exit 0 and no message,
// unless ends names its task (its name, or the task's local name; ""
// stands for every task).
func argoKubelet(ctx context.Context, c *cluster, ends map[string]podEnd) {
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
			end, ok := ends[nodeName(p)]
			if !ok {
				end, ok = ends[localName(p)]
			}
			if !ok {
				end = ends[""]
			}
			if end.hold {
				continue
			}
			p.Status.Phase = corev1.PodSucceeded
			reason := "Completed"
			if end.exit != 0 {
				p.Status.Phase, reason = corev1.PodFailed, "Error"
			}
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: end.exit, Reason: reason, Message: end.msg, FinishedAt: metav1.Now(),
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

// kubeArgoCase is an Argo document of testdata/argo run on the test
// cluster, and the pods it must make.
type kubeArgoCase struct {
	file  string
	phase apiv1.Phase // how the run ends
	code  apiv1.Code  // and its code
	ends  map[string]podEnd
	// pods counts the run's pods by their task's local name.
	pods map[string]int
	// images are the images of tasks' pods, by the task's local name.
	images map[string]string
	// args are what tasks' pods run (command and args, space-joined), by
	// the task's local name: the text must be in it.
	args map[string][]string
	// env is set in every pod of the tasks named.
	env map[string]map[string]string
	// labels, annotations and nodeSelector are on every pod.
	labels, annotations, nodeSelector map[string]string
}

var kubeArgoCases = []kubeArgoCase{
	{
		file: "hello-world.yaml", phase: apiv1.PhaseSucceeded,
		images: map[string]string{"": "busybox"},
		args:   map[string][]string{"": {"echo greetings from an argo container"}},
	},
	{
		file: "steps.yaml", phase: apiv1.PhaseSucceeded,
		pods:   map[string]int{"first": 1, "second-a": 1, "second-b": 1},
		images: map[string]string{"first": "busybox", "second-b": "busybox"},
		args:   map[string][]string{"second-a": {"sh -c", `echo "$SPEAKER: step two-a speaks"`}},
		env:    map[string]map[string]string{"first": {"SPEAKER": "the say template"}, "second-b": {"SPEAKER": "the say template"}},
	},
	{
		file: "dag-diamond.yaml", phase: apiv1.PhaseSucceeded,
		pods: map[string]int{"": 4},
		args: map[string][]string{"": {"echo corner "}},
	},
	{
		file: "dag-nested.yaml", phase: apiv1.PhaseSucceeded,
		pods: map[string]int{"": 16},
		args: map[string][]string{"": {"echo nested "}},
	},
	{
		file: "loops.yaml", phase: apiv1.PhaseSucceeded,
		pods:   map[string]int{"": 2},
		images: map[string]string{"": "busybox"},
		args:   map[string][]string{"0": {"echo item: good morning"}, "1": {"echo item: good night"}},
	},
	{
		file: "loops-maps.yaml", phase: apiv1.PhaseSucceeded,
		pods:   map[string]int{"": 3},
		images: map[string]string{"0": "debian:12.5", "1": "alpine:3.19", "2": "ubuntu:24.04"},
		args:   map[string][]string{"": {"echo os "}},
	},
	{
		file: "coinflip.yaml", phase: apiv1.PhaseSucceeded,
		ends:   map[string]podEnd{"flip": {msg: record("result", "heads")}},
		pods:   map[string]int{"flip": 1, "heads": 1, "tails": 0},
		images: map[string]string{"flip": "python:alpine3.23", "heads": "busybox"},
		args:   map[string][]string{"flip": {"/usr/bin/python3"}, "heads": {"sh -c", `echo "the coin landed heads"`}},
	},
	{
		file: "output-parameter.yaml", phase: apiv1.PhaseSucceeded,
		ends: map[string]podEnd{"produce": {msg: record("written", "an answer from kwok")}},
		pods: map[string]int{"produce": 1, "consume": 1},
		args: map[string][]string{"consume": {"echo consumed: an answer from kwok"}},
	},
	{
		file: "scripts-python.yaml", phase: apiv1.PhaseSucceeded,
		ends:   map[string]podEnd{"generate": {msg: record("result", "57")}},
		pods:   map[string]int{"generate": 1, "print": 1},
		images: map[string]string{"generate": "python:alpine3.23", "print": "alpine:3.23"},
		args:   map[string][]string{"generate": {"/usr/bin/python3", "random.randint(1, 100)"}, "print": {"echo python picked 57"}},
	},
	{
		file: "exit-code-output-variable.yaml", phase: apiv1.PhaseSucceeded,
		ends: map[string]podEnd{"exits": {msg: record("exitCode", "42")}},
		pods: map[string]int{"exits": 1, "report": 1},
		args: map[string][]string{"exits": {"exit 42"}, "report": {`echo "the step before exited 42"`}},
	},
	{
		file: "conditionals-simple.yaml", phase: apiv1.PhaseSucceeded,
		pods: map[string]int{"govaluate-form": 1, "expr-form": 1, "govaluate-false": 0},
	},
	{
		file: "node-selector-literal.yaml", phase: apiv1.PhaseSucceeded,
		pods:         map[string]int{"where": 1},
		nodeSelector: map[string]string{"kubernetes.io/arch": "amd64"},
		args:         map[string][]string{"where": {"sh -c", "echo asked for amd64"}},
	},
	{
		file: "pod-metadata.yaml", phase: apiv1.PhaseSucceeded,
		pods:        map[string]int{"labelled": 1},
		labels:      map[string]string{"app": "say", "tier": "demo"},
		annotations: map[string]string{"example.com/owner": "the-argo-examples"},
	},
	{
		file: "dag-enhanced-depends.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeExit,
		ends: map[string]podEnd{"c": {exit: 1}},
		pods: map[string]int{"a": 1, "b": 1, "c": 1, "runs-on-either": 1, "runs-on-one": 1, "never-runs": 0, "runs-last": 1},
	},
	{
		file: "timeouts-step.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeAttemptTimeout,
		ends: map[string]podEnd{"": {hold: true}},
		args: map[string][]string{"": {"sh -c", "echo started; sleep 86400"}},
	},
	{
		file: "exit-handlers.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeExit,
		ends:   map[string]podEnd{"fails": {exit: 1}},
		pods:   map[string]int{"notify": 1, "mourn": 1, "celebrate": 0},
		images: map[string]string{"notify": "alpine:3.23"},
		args:   map[string][]string{"mourn": {"echo it did not go well"}},
	},
}

// TestKubeArgoExamplesMakeArgosPods runs Argo documents on the test
// cluster, whose fake kubelet ends each pod: the pods carry the Argo
// template's image, command, args and env, the tasks run in Argo's order
// and conditions, and the run ends as Argo's would.
func TestKubeArgoExamplesMakeArgosPods(t *testing.T) {
	dir := argoDir(t)
	for _, tc := range kubeArgoCases {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			c := newCluster(t)
			home := c.home(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go argoKubelet(ctx, c, tc.ends)
			run := runOnCluster(t, home, filepath.Join(dir, tc.file))
			id := run.ID
			if run.Status.Phase != tc.phase || run.Status.Code != tc.code {
				t.Fatalf("the run is %s %s (%s), want %s %s", run.Status.Phase, run.Status.Code, run.Status.Message, tc.phase, tc.code)
			}
			checkArgoPods(t, c.pods(t, id), tc)
		})
	}
}

// runOnCluster runs file with kiln run on home and returns the run once it
// ended; it fails the test at once if kiln run made no run.
func runOnCluster(t *testing.T, home, file string) apiv1.Run {
	t.Helper()
	cmd := exec.Command(kilnBin, "--home", home, "run", "-q", file)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	var list []apiv1.Run
	waitFor(t, "the run to be created", func() bool {
		if list = runs(t, home); len(list) > 0 {
			return true
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("kiln run made no run: %v\n%s", err, out.String())
		default:
		}
		return false
	})
	var run apiv1.Run
	waitFor(t, "the run to end", func() bool {
		run = describe(t, home, list[0].ID)
		return run.Status.FinishedAt != nil
	})
	return run
}

// checkArgoPods checks a run's pods against tc; a task name "" stands for
// every pod.
func checkArgoPods(t *testing.T, pods []corev1.Pod, tc kubeArgoCase) {
	t.Helper()
	count := map[string]int{}
	for _, p := range pods {
		name := localName(p)
		count[name]++
		count[""]++
		ct := p.Spec.Containers[0]
		if want, ok := pick(tc.images, name); ok && ct.Image != want {
			t.Errorf("pod of %s runs image %q, want %q", name, ct.Image, want)
		}
		line := strings.Join(append(append([]string{}, ct.Command...), ct.Args...), " ")
		if want, ok := pick(tc.args, name); ok {
			for _, w := range want {
				if !strings.Contains(line, w) {
					t.Errorf("pod of %s runs %q, which lacks %q", name, line, w)
				}
			}
		}
		for what, want := range map[string][2]map[string]string{
			"label": {tc.labels, p.Labels}, "annotation": {tc.annotations, p.Annotations}, "nodeSelector": {tc.nodeSelector, p.Spec.NodeSelector},
		} {
			for k, v := range want[0] {
				if want[1][k] != v {
					t.Errorf("pod of %s has %s %s=%q, want %q", name, what, k, want[1][k], v)
				}
			}
		}
		env := map[string]string{}
		for _, e := range ct.Env {
			env[e.Name] = e.Value
		}
		for k, v := range tc.env[name] {
			if env[k] != v {
				t.Errorf("pod of %s has %s=%q, want %q", name, k, env[k], v)
			}
		}
	}
	for name, n := range tc.pods {
		if count[name] != n {
			t.Errorf("%d pods of %q, want %d (pods by task: %v)", count[name], name, n, count)
		}
	}
}

// record is an output parameter's record in a termination message.
func record(name, value string) string {
	return name + " " + strconv.Itoa(len(value)) + "\n" + value
}

// pick is m[name], else m[""] (what every pod must have).
func pick[T any](m map[string]T, name string) (T, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	v, ok := m[""]
	return v, ok
}
