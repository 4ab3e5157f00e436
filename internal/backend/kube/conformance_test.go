package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/backend/backendtest"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/testcluster"
)

func TestBackendConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, newSuiteHarness)
}

// suiteHarness runs the suite's processes as pods on the test cluster,
// in a namespace of their own. When every process of an attempt exits,
// kwok ends them as the annotations say (hack/kwok-stages.yaml): each
// container's exit code, the termination message that carries outputs,
// a second of running first. kwok ends all of a gang's pods or none, so
// when some run on, the harness ends the others itself, a second after
// they run, as a kubelet would report it. It counts every pod created,
// by UID, to tell how often an attempt started.
type suiteHarness struct {
	c       *testcluster.Cluster
	mu      sync.Mutex
	created map[string]map[types.UID]bool // job label -> pods created
	hosts   map[job.AttemptID]int
	exits   map[string]int  // pod -> exit code the harness gives it
	ended   map[string]bool // pods the harness ended
}

func newSuiteHarness(t *testing.T) backendtest.Harness {
	c := testcluster.Connect(t)
	h := &suiteHarness{
		c: c, created: map[string]map[types.UID]bool{}, hosts: map[job.AttemptID]int{},
		exits: map[string]int{}, ended: map[string]bool{},
	}
	w, err := c.Client.CoreV1().Pods(c.Namespace).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				h.saw(ev.Type, p)
			}
		}
	}()
	return h
}

// saw counts a pod created, and ends one the harness must end once it runs.
func (h *suiteHarness) saw(typ watch.EventType, p *corev1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if typ == watch.Added {
		if h.created[p.Labels[LabelJob]] == nil {
			h.created[p.Labels[LabelJob]] = map[types.UID]bool{}
		}
		h.created[p.Labels[LabelJob]][p.UID] = true
	}
	code, planned := h.exits[p.Name]
	if !planned || h.ended[p.Name] || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return
	}
	h.ended[p.Name] = true
	go h.end(p.Name, code)
}

// end reports pod name's containers exited with code, a second from now.
func (h *suiteHarness) end(name string, code int) {
	<-time.After(time.Second)
	pods := h.c.Client.CoreV1().Pods(h.c.Namespace)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp != nil {
		return
	}
	p.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		p.Status.Phase = corev1.PodFailed
	}
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: int32(code), Reason: "Error", FinishedAt: metav1.Now(),
		}}
	}
	// A pod deleted meanwhile (its gang was stopped) needs no ending.
	_, _ = pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
}

func (h *suiteHarness) Backend(t *testing.T) backend.Backend {
	b, err := New(t.Context(), Config{Kubeconfig: h.c.Kubeconfig, Namespace: h.c.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func (h *suiteHarness) Shape(_ *testing.T, spec *job.Spec, procs ...backendtest.Proc) *job.Spec {
	annos := map[string]string{"kwok.kiln.dev/delay": "1s", "kwok.kiln.dev/exit-code": "0"}
	var message strings.Builder
	hostSet := map[int]bool{}
	mixed := slices.ContainsFunc(procs, func(p backendtest.Proc) bool { return p.Forever })
	for _, p := range procs {
		proc := job.Process{Name: p.Name, Host: p.Host, Command: []string{"x"}}
		spec.Processes = append(spec.Processes, proc)
		hostSet[p.Host] = true
		switch {
		case mixed && !p.Forever:
			h.mu.Lock()
			h.exits[names(spec.ID).podName(p.Host, isGang(spec))] = p.Exit
			h.mu.Unlock()
		case !p.Forever:
			annos["kwok.kiln.dev/exit-code."+containerName(proc)] = strconv.Itoa(p.Exit)
		}
		for k, v := range p.Outputs {
			fmt.Fprintf(&message, "%s %d\n%s", k, len(v), v)
		}
	}
	if mixed {
		delete(annos, "kwok.kiln.dev/exit-code") // kwok leaves the pods running; the harness ends some
	}
	for _, a := range spec.Artifacts { // no process of the suite writes its artifacts
		fmt.Fprintf(&message, "%s %d\n%s", missingRecord, len(a), a)
	}
	if message.Len() > 0 {
		annos["kwok.kiln.dev/message"] = message.String()
	}
	b, _ := json.Marshal(apiv1.PodTemplate{Metadata: apiv1.PodMetadata{Annotations: annos}})
	spec.Container.PodTemplate, spec.Container.Image = b, "busybox:1.36"
	h.mu.Lock()
	h.hosts[spec.ID] = len(hostSet)
	h.mu.Unlock()
	return spec
}

func (h *suiteHarness) Started(_ *testing.T, id job.AttemptID) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.created[names(id).Base]) / h.hosts[id]
}

// LogLine is what the test cluster's kwok serves as every container's log.
func (h *suiteHarness) LogLine(backendtest.Proc) string { return "kwok: line 2 of a container log" }
