package kube

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/testcluster"
)

// TestPermissionsAreWhatTheBackendUses drives the backend through every
// path that reaches the cluster (launch, the informers, logs, stopping an
// earlier attempt, a status record another engine wrote first, abort,
// release with a clean TTL, a workspace, removing the run) and records
// each request as RBAC sees it, verb and resource: they are exactly
// Permissions, no verb more (granted but never used) and none less.
func TestPermissionsAreWhatTheBackendUses(t *testing.T) {
	c := testcluster.Connect(t)
	used := &usedVerbs{}
	cfg := withDefaults(Config{
		Kubeconfig: c.Kubeconfig, Namespace: c.Namespace, GangScheduler: GangCoscheduling,
		SchedulerName: "default-scheduler", CleanPolicy: CleanAlways, CleanTTL: time.Hour, Resync: time.Hour,
	})
	rc, ns, err := RESTConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return used.recorder(rt) })
	core, err := newCoreClient(rc, ns)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := start(t.Context(), cfg, ns, core, dyn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	const run = "r-perms"
	gang := func(n int) *job.Spec {
		env := []string{"TOKEN=secret"}
		return withAnnotations(&job.Spec{
			ID:        job.AttemptID{Run: run, Node: "train", Number: n},
			Processes: []job.Process{{Name: "node-0", Command: []string{"x"}, Env: env}, {Name: "node-1", Command: []string{"x"}, Env: env, Host: 1}},
			Files:     map[string]string{"hostfile": "a\nb\n"}, SecretEnv: []string{"TOKEN"},
		}, nil)
	}
	task := withAnnotations(&job.Spec{ID: job.AttemptID{Run: run, Node: "task", Number: 1}, Processes: []job.Process{{Command: []string{"x"}}}},
		map[string]string{"kwok.kiln.dev/exit-code": "0"})
	first, second := gang(1), gang(2)
	for _, s := range []*job.Spec{task, first} {
		if err := b.Launch(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the first gang to run", func() bool {
		pods := b.podsOf(names(first.ID))
		return len(pods) == 2 && pods[0].Status.Phase == corev1.PodRunning && pods[1].Status.Phase == corev1.PodRunning
	})
	if err := b.Logs(ctx, first.ID, backend.LogOptions{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	// The second attempt stops the first one's pods before it starts.
	if err := b.Launch(ctx, second); err != nil {
		t.Fatal(err)
	}
	// Another engine recorded the second attempt's end, and this one's
	// informer has not seen it (it lacks the label the informer selects).
	a := names(second.ID)
	st, _ := json.Marshal(job.Status{State: job.StateExited, ExitCode: 3})
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: a.recordName(), Annotations: map[string]string{AnnoAttemptID: second.ID.String()}},
		Data:       map[string]string{"status": string(st)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Abort(ctx, second.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.record(a); got.ExitCode != 3 {
		t.Errorf("the record that stands has exit code %d, want the other engine's 3", got.ExitCode)
	}
	eventually(t, "the task to end", func() bool {
		st, err := b.Observe(ctx, task)
		return err == nil && st.State == job.StateExited
	})
	for _, s := range []*job.Spec{task, second} {
		if err := b.Release(ctx, s.ID, s == task); err != nil {
			t.Fatal(err)
		}
	}
	// An engine that adopts a whole gang with a pod gone reads the gang's
	// Service and that pod from the API server (vanished).
	lost := gang(1)
	lost.ID.Node = "lost"
	if err := b.Launch(ctx, lost); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gang to be whole", func() bool { return len(b.podsOf(names(lost.ID))) == 2 })
	gone := names(lost.ID).podName(1, true)
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, gone, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pod to be gone", func() bool {
		_, err := c.Client.CoreV1().Pods(ns).Get(ctx, gone, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	adopter, err := start(ctx, cfg, ns, core, dyn)
	if err != nil {
		t.Fatal(err)
	}
	defer adopter.Close()
	if st, err := adopter.Observe(ctx, lost); err != nil || st.Code != string(apiv1.CodePodLost) {
		t.Fatalf("adopting the gang that lost %s: %+v, %v; want %s", gone, st, err, apiv1.CodePodLost)
	}
	workspace := &job.Spec{
		ID: job.AttemptID{Run: run, Node: "init", Number: 1}, Processes: []job.Process{{Command: []string{"x"}}},
		Workspace: &job.Workspace{Dirs: map[string]string{"KILN_DATASET_DIR": "dataset"}},
	}
	if err := b.Launch(ctx, withAnnotations(workspace, nil)); err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveRun(ctx, run); err == nil {
		t.Fatal("RemoveRun while an attempt of the run runs succeeded; want it refused")
	}
	if err := b.Abort(ctx, workspace.ID, 0); err != nil { // a run is removed once it ended
		t.Fatal(err)
	}
	if err := b.RemoveRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	got := used.grants()
	// Release also sweeps the PodGroups of the other gang scheduler, which a
	// runtime's pod-group policy may have picked; the backend tolerates that
	// kind being forbidden, so its Role need not grant it.
	if other := got["scheduling.volcano.sh/podgroups"]; !slices.Equal(other, []string{"deletecollection"}) {
		t.Errorf("the backend asked %v of volcano's podgroups, want only the release's deletecollection", other)
	}
	delete(got, "scheduling.volcano.sh/podgroups")
	// It sweeps Kueue's Workloads too, tolerating a Role without
	// KueuePermissions: no task here names a queue.
	if kq := got["kueue.x-k8s.io/workloads"]; !slices.Equal(kq, []string{"deletecollection"}) {
		t.Errorf("the backend asked %v of Kueue's workloads, want only the release's deletecollection", kq)
	}
	delete(got, "kueue.x-k8s.io/workloads")
	if diff := cmp.Diff(Grants(Permissions(GangCoscheduling)), got); diff != "" {
		t.Errorf("the backend used (+) other than kube.Permissions (-):\n%s", diff)
	}
}

// usedVerbs records the requests of a client as RBAC authorizes them.
type usedVerbs struct {
	mu   sync.Mutex
	seen map[string][]string // "group/resource" -> verbs
}

func (u *usedVerbs) recorder(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if key, verb, ok := authorized(r); ok {
			u.mu.Lock()
			if u.seen == nil {
				u.seen = map[string][]string{}
			}
			if !slices.Contains(u.seen[key], verb) {
				u.seen[key] = append(u.seen[key], verb)
				slices.Sort(u.seen[key])
			}
			u.mu.Unlock()
		}
		return next.RoundTrip(r)
	})
}

func (u *usedVerbs) grants() map[string][]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := map[string][]string{}
	for k, v := range u.seen {
		out[k] = slices.Clone(v)
	}
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// authorized names a namespaced resource request as RBAC does:
// "group/resource[/subresource]" and its verb.
func authorized(r *http.Request) (string, string, bool) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return "", "", false
	}
	if len(parts) < 3 || parts[0] != "namespaces" {
		return "", "", false
	}
	resource, rest := parts[2], parts[3:]
	if len(rest) == 2 {
		resource += "/" + rest[1]
	}
	named := len(rest) > 0
	verb := map[string]string{
		http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "patch",
		http.MethodGet: "get", http.MethodDelete: "delete",
	}[r.Method]
	switch {
	case r.Method == http.MethodGet && !named && r.URL.Query().Get("watch") != "":
		verb = "watch"
	case r.Method == http.MethodGet && !named:
		verb = "list"
	case r.Method == http.MethodDelete && !named:
		verb = "deletecollection"
	}
	return group + "/" + resource, verb, true
}
