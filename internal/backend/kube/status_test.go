package kube

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

var t0 = time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)

func podAt(h int, phase corev1.PodPhase, cs ...corev1.ContainerStatus) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p" + string(rune('0'+h)), CreationTimestamp: metav1.NewTime(t0)},
		Status:     corev1.PodStatus{Phase: phase, ContainerStatuses: cs},
	}
}

func ended(name string, code int32, reason, msg string, at time.Duration) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, Message: msg, FinishedAt: metav1.NewTime(t0.Add(at)),
	}}}
}

func running(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func waiting(reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "main", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}}
}

func gangSpec(n int, leader string) *job.Spec {
	s := &job.Spec{ID: mustID("r/t/1"), Leader: leader}
	for i := range n {
		s.Processes = append(s.Processes, job.Process{Name: "node-" + string(rune('0'+i)), Host: i})
	}
	return s
}

func TestDecide(t *testing.T) {
	task := &job.Spec{ID: mustID("r/t/1"), Processes: []job.Process{{}}, Outputs: []string{"answer"}}
	lim := limits{Stuck: time.Minute, Unschedulable: 0}
	unschedulable := podAt(0, corev1.PodPending)
	unschedulable.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/4 nodes are available: 4 Insufficient cpu.",
	}}
	evicted := podAt(1, corev1.PodFailed)
	evicted.Status.Reason, evicted.Status.Message = "Evicted", "The node was low on resource: memory."
	timed := gangSpec(1, "")
	timed.Container.ScheduleTimeout = 5 * time.Second
	cases := []struct {
		name   string
		spec   *job.Spec
		pods   map[int]*corev1.Pod
		now    time.Duration
		state  job.State
		code   int
		kln    apiv1.Code
		failed string
		want   string // in Message or OutputError
	}{
		{"no pods yet", task, nil, 0, job.StateUnknown, 0, "", "", ""},
		{"running", task, map[int]*corev1.Pod{0: podAt(0, corev1.PodRunning, running("main"))}, 0, job.StateRunning, 0, "", "", ""},
		{
			"succeeded with output", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodSucceeded, ended("main", 0, "Completed", "answer 2\n42", 0))},
			0, job.StateExited, 0, "", "", "",
		},
		{
			"succeeded without its output", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodSucceeded, ended("main", 0, "Completed", "", 0))},
			0, job.StateExited, 0, "", "", `output parameter "answer" was not written`,
		},
		{
			"exit code", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodFailed, ended("main", 3, "Error", "", 0))},
			0, job.StateExited, 3, "", "", "",
		},
		{
			"OOMKilled", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodFailed, ended("main", 137, "OOMKilled", "", 0))},
			0, job.StateExited, 137, apiv1.CodeOOMKilled, "", "OOMKilled",
		},
		{"first failing rank decides", gangSpec(3, ""), map[int]*corev1.Pod{
			0: podAt(0, corev1.PodRunning, running("node-0")),
			1: podAt(1, corev1.PodFailed, ended("node-1", 2, "Error", "", 2*time.Second)),
			2: podAt(2, corev1.PodFailed, ended("node-2", 9, "Error", "", time.Second)),
		}, 0, job.StateExited, 9, "", "node-2", ""},
		{
			"evicted pod", gangSpec(2, ""),
			map[int]*corev1.Pod{0: podAt(0, corev1.PodRunning, running("node-0")), 1: evicted},
			0, job.StateExited, -1, apiv1.CodeEvicted, "node-1", "low on resource",
		},
		{"leader decides", gangSpec(2, "node-0"), map[int]*corev1.Pod{
			0: podAt(0, corev1.PodSucceeded, ended("node-0", 0, "Completed", "", 0)),
			1: podAt(1, corev1.PodRunning, running("node-1")),
		}, 0, job.StateExited, 0, "", "", ""},
		// job.Decide's rule, the same on every backend: a member that fails
		// before its leader ends takes the gang down.
		{"a worker failing before its leader ends fails the gang", gangSpec(2, "node-0"), map[int]*corev1.Pod{
			0: podAt(0, corev1.PodRunning, running("node-0")),
			1: podAt(1, corev1.PodFailed, ended("node-1", 1, "Error", "", 0)),
		}, 0, job.StateExited, 1, "", "node-1", ""},
		{
			"image pull backoff within grace", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodPending, waiting("ImagePullBackOff"))},
			30 * time.Second, job.StateRunning, 0, "", "", "",
		},
		{
			"image pull backoff past grace", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodPending, waiting("ImagePullBackOff"))},
			time.Minute, job.StateExited, -1, apiv1.CodeImagePull, "", "ImagePullBackOff: details",
		},
		{
			"invalid image name at once", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodPending, waiting("InvalidImageName"))},
			0, job.StateExited, -1, apiv1.CodeImagePull, "", "InvalidImageName",
		},
		{
			"missing secret past grace", task,
			map[int]*corev1.Pod{0: podAt(0, corev1.PodPending, waiting("CreateContainerConfigError"))},
			2 * time.Minute, job.StateExited, -1, apiv1.CodeContainerConfig, "", "CreateContainerConfigError",
		},
		{"unschedulable waits without a timeout", task, map[int]*corev1.Pod{0: unschedulable}, time.Hour, job.StateRunning, 0, "", "", ""},
		{
			"unschedulable past the gang's timeout", timed,
			map[int]*corev1.Pod{0: unschedulable},
			5 * time.Second,
			job.StateExited, -1, apiv1.CodeUnschedulable, "", "Insufficient cpu",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := decide(c.spec, c.pods, t0.Add(c.now), lim)
			if st.State != c.state || st.ExitCode != c.code || st.Code != string(c.kln) || st.Failed != c.failed {
				t.Fatalf("got state %v exit %d code %q failed %q (%s%s), want %v %d %q %q",
					st.State, st.ExitCode, st.Code, st.Failed, st.Message, st.OutputError, c.state, c.code, c.kln, c.failed)
			}
			if got := st.Message + st.OutputError; !strings.Contains(got, c.want) {
				t.Errorf("message %q does not contain %q", got, c.want)
			}
		})
	}
	st := decide(task, map[int]*corev1.Pod{0: podAt(0, corev1.PodSucceeded, ended("main", 0, "Completed", "answer 2\n42", 0))}, t0, lim)
	if st.Outputs["answer"] != "42" || !st.Succeeded() {
		t.Errorf("outputs %v, succeeded %v", st.Outputs, st.Succeeded())
	}
}

func TestParseOutputs(t *testing.T) {
	got, err := parseOutputs("a 3\nx\nyb 0\nc 5\nhello", []string{"a", "b", "c"})
	if err != nil || got["a"] != "x\ny" || got["b"] != "" || got["c"] != "hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := parseOutputs("a 99\nshort", nil); err == nil || !strings.Contains(err.Error(), "at most 4096 bytes") {
		t.Errorf("a truncated message must be reported, got %v", err)
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("very-long-workflow-name-", 4) + "abcde"
	for _, c := range []struct{ in, want string }{
		{"train-abcde/prepare/1", "train-abcde-prepare-1"},
		{"Train_X/y/2", "train-x-y-2-"},
		{long + "/t/1", long[:43]},
	} {
		got := names(mustID(c.in)).Base
		if !strings.HasPrefix(got, c.want) || len(got) > maxBase {
			t.Errorf("names(%q).Base = %q, want prefix %q and at most %d characters", c.in, got, c.want, maxBase)
		}
	}
	if a, b := names(mustID("x/Y/1")).Base, names(mustID("x/y/1")).Base; a == b {
		t.Errorf("IDs that differ in case share the base %q", a)
	}
}

// The wrapper is shell run in the task's container; here it runs in this
// machine's /bin/sh, writing its termination message to a file.
func TestOutputsWrapperInARealShell(t *testing.T) {
	dir := t.TempDir()
	msg := filepath.Join(dir, "termination log")
	task := []string{"sh", "-c", `printf '42' > "$KILN_OUTPUTS/answer"; printf 'two\nlines' > "$KILN_OUTPUTS/text"; exit "$1"`, "task"}
	run := func(code string) error {
		argv := outputsWrapper(append(task, code), []string{"answer", "text", "absent"}, nil, msg)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "KILN_OUTPUTS="+dir)
		return cmd.Run()
	}
	if err := run("0"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(msg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseOutputs(string(b), []string{"answer", "text"})
	if err != nil || got["answer"] != "42" || got["text"] != "two\nlines" {
		t.Fatalf("outputs %q (%v) from message %q", got, err, b)
	}
	if _, err := parseOutputs(string(b), []string{"absent"}); err == nil {
		t.Error("an output the task did not write must be reported")
	}
	os.Remove(msg)
	// A declared artifact the task did not write comes back as a record
	// naming it; one it wrote does not.
	if err := os.WriteFile(filepath.Join(dir, "written.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	argv := outputsWrapper(append(task, "0"), nil, []string{"written.bin", "dir/missing weights.bin"}, msg)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "KILN_OUTPUTS="+dir)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(msg)
	if _, err := parseOutputs(string(b), nil); err == nil || !strings.Contains(err.Error(), `"dir/missing weights.bin"`) {
		t.Errorf("message %q: %v, want an error naming the missing artifact", b, err)
	}
	os.Remove(msg)
	var ee *exec.ExitError
	if err := run("3"); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the task's exit code must pass through, got %v", err)
	}
	if _, err := os.Stat(msg); err == nil {
		t.Error("a failed task must not report outputs")
	}
}
