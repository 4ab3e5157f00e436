package e2e

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files")

const torchTrainJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata:
  name: ddp
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: ghcr.io/example/ddp:1.0
    numNodes: 4
    numProcPerNode: 2
    command: [torchrun, /app/train.py]
    args: [--epochs, "3"]
    resourcesPerNode: {cpu: "2", memory: 4Gi}
    env:
    - {name: DATASET, value: /data/mnist}
  podTemplate:
    metadata:
      annotations: {team: vision}
    spec:
      nodeSelector: {type: kwok}
`

// goldenPod is the part of a pod kiln decides: what the golden file holds.
type goldenPod struct {
	Name         string               `json:"name"`
	Labels       map[string]string    `json:"labels"`
	Annotations  map[string]string    `json:"annotations"`
	Hostname     string               `json:"hostname"`
	NodeSelector map[string]string    `json:"nodeSelector"`
	Subdomain    string               `json:"subdomain"`
	Restart      corev1.RestartPolicy `json:"restartPolicy"`
	Containers   []goldenContainer    `json:"containers"`
	Volumes      []corev1.Volume      `json:"volumes"`
}

type goldenContainer struct {
	Name         string                      `json:"name"`
	Image        string                      `json:"image"`
	Command      []string                    `json:"command"`
	Env          []corev1.EnvVar             `json:"env"`
	Resources    corev1.ResourceRequirements `json:"resources"`
	VolumeMounts []corev1.VolumeMount        `json:"volumeMounts"`
}

type goldenService struct {
	Name                     string            `json:"name"`
	Labels                   map[string]string `json:"labels"`
	ClusterIP                string            `json:"clusterIP"`
	Selector                 map[string]string `json:"selector"`
	PublishNotReadyAddresses bool              `json:"publishNotReadyAddresses"`
}

type golden struct {
	Service goldenService `json:"service"`
	Pods    []goldenPod   `json:"pods"`
}

// trainerTorchTrainJob is torchTrainJob as Kubeflow Trainer writes it:
// kiln must make the very same objects of it.
const trainerTorchTrainJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: ddp
spec:
  runtimeRef:
    apiGroup: trainer.kubeflow.org
    kind: ClusterTrainingRuntime
    name: torch-distributed
  trainer:
    image: ghcr.io/example/ddp:1.0
    numNodes: 4
    numProcPerNode: 2
    command: [torchrun, /app/train.py]
    args: [--epochs, "3"]
    resourcesPerNode:
      requests: {cpu: "2", memory: 4Gi}
      limits: {cpu: "2", memory: 4Gi}
    env:
    - {name: DATASET, value: /data/mnist}
  podTemplateOverrides:
  - targetJobs: [{name: node}]
    metadata:
      annotations: {team: vision}
    spec:
      nodeSelector: {type: kwok}
`

func TestKubeTorchTrainJobMatchesGolden(t *testing.T) {
	kubeTrainJobMatchesGolden(t, torchTrainJob)
}

// TestKubeTrainerTrainJobMakesTheSameObjects runs the same job written in
// Kubeflow Trainer's shape: its pods and service are kiln's own job's.
func TestKubeTrainerTrainJobMakesTheSameObjects(t *testing.T) {
	kubeTrainJobMatchesGolden(t, trainerTorchTrainJob)
}

func kubeTrainJobMatchesGolden(t *testing.T, doc string) {
	c := newCluster(t)
	home := c.home(t)
	// The pods run until deleted: look at them running, then cancel.
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "ddp.yaml", doc))
	id := newestRun(t, home)
	waitPods(t, c, id, 4)
	g := golden{}
	svcs, err := c.cs.CoreV1().Services(c.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kiln.dev/run=" + string(id)})
	if err != nil || len(svcs.Items) != 1 {
		t.Fatalf("want exactly one service, got %v (%v)", len(svcs.Items), err)
	}
	s := svcs.Items[0]
	g.Service = goldenService{s.Name, s.Labels, s.Spec.ClusterIP, s.Spec.Selector, s.Spec.PublishNotReadyAddresses}
	pods := c.pods(t, id)
	for _, p := range pods {
		gp := goldenPod{
			Name: p.Name, Labels: p.Labels, Annotations: p.Annotations, Hostname: p.Spec.Hostname, NodeSelector: p.Spec.NodeSelector,
			Subdomain: p.Spec.Subdomain, Restart: p.Spec.RestartPolicy, Volumes: p.Spec.Volumes,
		}
		for _, ct := range p.Spec.Containers {
			gp.Containers = append(gp.Containers, goldenContainer{ct.Name, ct.Image, ct.Command, ct.Env, ct.Resources, ct.VolumeMounts})
		}
		g.Pods = append(g.Pods, gp)
	}
	got, err := yaml.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	got = []byte(strings.ReplaceAll(string(got), string(id), "RUN"))
	path := filepath.Join("testdata", "kube-torch-trainjob.golden.yaml")
	if *update && doc == torchTrainJob {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("the TrainJob's objects differ from %s (-want +got):\n%s", path, diff)
	}
	if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
		t.Fatalf("cancel: %s", r.stderr)
	}
	_ = cmd.Wait()
	waitCancelled(t, home, id)
}
