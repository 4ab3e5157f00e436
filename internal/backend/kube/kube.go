// Package kube runs attempts as pods on a Kubernetes cluster: a task's
// attempt is one pod, a training job's gang is a pod per node behind a
// headless Service (and a PodGroup when a gang scheduler is configured).
// It reads the cluster through client-go informers and writes through a
// rate-limited client. Everything it creates is named after the attempt,
// so a repeated launch finds what exists instead of creating it twice.
package kube

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// CleanPolicy says which finished attempts lose their pods.
type CleanPolicy string

// Clean policies. Pods are kept by default: their logs live in them.
const (
	CleanNever     CleanPolicy = "Never"
	CleanOnSuccess CleanPolicy = "OnSuccess"
	CleanAlways    CleanPolicy = "Always"
)

// Config is how the backend reaches and uses the cluster.
type Config struct {
	// Kubeconfig, Context and Namespace select the cluster; all optional.
	Kubeconfig, Context, Namespace string
	// GangScheduler is "", "coscheduling" (scheduler-plugins) or "volcano".
	GangScheduler string
	// SchedulerName is set on a gang's pods; default the gang scheduler's.
	SchedulerName string
	// CleanPolicy and CleanTTL decide when a finished attempt's objects
	// are deleted: those the policy selects, CleanTTL after the attempt ended.
	CleanPolicy CleanPolicy
	CleanTTL    time.Duration
	// WorkspaceSize and WorkspaceClass shape the claim kiln creates for a
	// training job's initializers and trainer to share when its pod
	// template has no "initializer" volume (default 10Gi, the cluster's
	// default StorageClass).
	WorkspaceSize, WorkspaceClass string
	// Unschedulable bounds how long a task's pods may wait for a node when
	// the task sets no schedule timeout (0: forever). Stuck bounds how long
	// a container may wait for its image or configuration (default 3m).
	Unschedulable, Stuck time.Duration
	// Resync is how often everything is compared again (default 30s).
	Resync time.Duration
	// QPS and Burst of the client (default 100 and 200).
	QPS   float32
	Burst int
	Log   *slog.Logger
	// KilnImage holds the kiln binary that pods copy to fetch and store
	// their artifacts themselves (job.Spec.Store); required for those.
	KilnImage string
}

// Backend is the kubernetes backend.
type Backend struct {
	cfg       Config
	ns        string
	shape     shape
	core      *coreClient
	dynamic   dynamic.Interface
	pods      cache.SharedIndexInformer
	records   listersv1.ConfigMapLister
	stop      chan struct{}
	closeOnce sync.Once
	events    chan job.AttemptID
	mu        sync.Mutex
	specs     map[job.AttemptID]*job.Spec
	gone      map[job.AttemptID]string     // attempt -> pod deleted under it
	decided   map[job.AttemptID]job.Status // records this process wrote or read
	reported  map[job.AttemptID]bool       // attempts Watch has reported
	lost      map[job.AttemptID]int        // hosts of running elastic gangs Watch has reported lost
	queues    map[job.AttemptID]string     // why running attempts wait to be placed, as Watch reported it
	finished  map[job.AttemptID]bool       // attempts whose Kueue Workload was marked Finished
	kueueOnce sync.Once
	kueueInf  cache.SharedIndexInformer // kiln's Kueue Workloads, once an attempt names a queue
	lim       limits
	janitorAt time.Time
}

var (
	_ backend.Backend   = (*Backend)(nil)
	_ backend.Notifier  = (*Backend)(nil)
	_ backend.Releaser  = (*Backend)(nil)
	_ backend.Logger    = (*Backend)(nil)
	_ backend.Networker = (*Backend)(nil)
)

const jobIndex = "job"

// New connects to the cluster and starts watching kiln's pods. It fails
// with KLN-6008 when no configuration is usable and KLN-6002 when the
// cluster cannot be reached.
func New(ctx context.Context, cfg Config) (*Backend, error) {
	rc, ns, err := RESTConfig(cfg)
	if err != nil {
		return nil, err
	}
	core, err := newCoreClient(rc, ns)
	if err != nil {
		return nil, &apiv1.Error{Code: apiv1.CodeKubeConfig, Message: err.Error()}
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, &apiv1.Error{Code: apiv1.CodeKubeConfig, Message: err.Error()}
	}
	return start(ctx, withDefaults(cfg), ns, core, dyn)
}

func start(ctx context.Context, cfg Config, ns string, core *coreClient, dyn dynamic.Interface) (*Backend, error) {
	b := &Backend{
		cfg: cfg, ns: ns, core: core, dynamic: dyn, events: make(chan job.AttemptID, 1024), stop: make(chan struct{}),
		specs: map[job.AttemptID]*job.Spec{}, gone: map[job.AttemptID]string{}, decided: map[job.AttemptID]job.Status{}, reported: map[job.AttemptID]bool{},
		lost: map[job.AttemptID]int{}, queues: map[job.AttemptID]string{}, finished: map[job.AttemptID]bool{},
		shape: shape{Namespace: ns, GangScheduler: cfg.GangScheduler, SchedulerName: cfg.SchedulerName, KilnImage: cfg.KilnImage},
		lim:   limits{Unschedulable: cfg.Unschedulable, Stuck: cfg.Stuck},
	}
	managed := LabelManagedBy + "=" + managedBy
	b.pods = core.informer("pods", managed, &corev1.Pod{}, func() runtime.Object { return &corev1.PodList{} },
		cfg.Resync, cache.Indexers{jobIndex: byJob})
	if _, err := b.pods.AddEventHandler(b.handler()); err != nil {
		return nil, err
	}
	maps := core.informer("configmaps", managed, &corev1.ConfigMap{}, func() runtime.Object { return &corev1.ConfigMapList{} },
		cfg.Resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	b.records = listersv1.NewConfigMapLister(maps.GetIndexer())
	go b.pods.Run(b.stop)
	go maps.Run(b.stop)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), b.pods.HasSynced, maps.HasSynced) {
		close(b.stop)
		return nil, &apiv1.Error{Code: apiv1.CodeBackend, Message: fmt.Sprintf(
			"cannot read pods and config maps from the cluster's namespace %q within 30s: check that the API server is up and kiln may list and watch them there", ns)}
	}
	return b, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Resync == 0 {
		cfg.Resync = 30 * time.Second
	}
	if cfg.Stuck == 0 {
		cfg.Stuck = 3 * time.Minute
	}
	if cfg.WorkspaceSize == "" {
		cfg.WorkspaceSize = DefaultWorkspaceSize
	}
	if cfg.CleanPolicy == "" {
		cfg.CleanPolicy = CleanNever
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.SchedulerName == "" {
		switch cfg.GangScheduler {
		case GangCoscheduling:
			cfg.SchedulerName = "scheduler-plugins-scheduler"
		case GangVolcano:
			cfg.SchedulerName = "volcano"
		}
	}
	return cfg
}

func byJob(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	return []string{p.Labels[LabelJob]}, nil
}

// Namespace is where the backend creates its objects.
func (b *Backend) Namespace() string { return b.ns }

// Close stops watching the cluster. Pods keep running. Closing twice is
// harmless.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() { close(b.stop) })
	return nil
}

// OutputDir is where an attempt's outputs live inside its containers.
func (b *Backend) OutputDir(job.AttemptID) string { return OutputsDir }

// BasePort is the first port of a gang's rendezvous ports. Every pod has
// its own address, so the same ports serve every job.
const BasePort = 29500

// Network names a gang's nodes by their pods' stable DNS names,
// <pod>.<service>, and gives them fixed ports.
func (b *Backend) Network(_ context.Context, id job.AttemptID, nodes, ports int) (job.Network, error) {
	a := names(id)
	n := job.Network{}
	for i := range nodes {
		n.Hosts = append(n.Hosts, a.podName(i, true)+"."+a.Base)
	}
	for k := range ports {
		n.Ports = append(n.Ports, BasePort+k)
	}
	return n, nil
}

// remember keeps an attempt's spec, which the watch needs to judge its
// pods, and reports whether it is new to this process.
func (b *Backend) remember(spec *job.Spec) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.specs[spec.ID]; ok {
		return false
	}
	b.specs[spec.ID] = spec
	return true
}

func (b *Backend) spec(id job.AttemptID) *job.Spec {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.specs[id]
}

// podsOf returns an attempt's pods from the informer's cache, by host.
func (b *Backend) podsOf(a attempt) map[int]*corev1.Pod {
	objs, _ := b.pods.GetIndexer().ByIndex(jobIndex, a.Base)
	out := make(map[int]*corev1.Pod, len(objs))
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.Annotations[AnnoAttemptID] != a.ID.String() || p.DeletionTimestamp != nil && !terminal(p) {
			continue
		}
		h, _ := strconv.Atoi(p.Labels[LabelHost])
		out[h] = p
	}
	return out
}

var podGroupResources = map[string]schema.GroupVersionResource{
	GangCoscheduling: {Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"},
	GangVolcano:      {Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"},
}
