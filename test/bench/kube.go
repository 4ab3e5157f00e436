package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"kiln.dev/kiln/internal/backend/kube"
)

// The pod every row of the kube group runs: one container, this image and
// command, this CPU request, restart policy Never.
const (
	gangImage = "ghcr.io/example/ddp:1.0"
	gangCPU   = "100m"
	kubeRuns  = 5
)

// kubeGang times an n-node gang from submission to all its pods Running
// on the test cluster (kwok nodes: a pod runs as soon as it is bound), in
// kubeRuns alternating rounds, each in a fresh namespace, and compares the
// medians. Every row's clock starts when its submission starts and stops
// when the bench's own watch sees the last pod Running:
//
//   - kiln: a TrainJob through `kiln run` (torch-distributed runtime);
//     from the run's creation as kiln records it, so kiln's process start
//     and its connection to the cluster (made before it submits) are not
//     counted; the engine's round, the launch and the pods are.
//   - bare pods: the same client configuration as kiln's (kube.RESTConfig:
//     QPS, burst, protobuf) creating n pods of the same image, command,
//     request and restart policy, as many at a time as kiln creates them.
//   - bare pods + Service: the same, after a headless Service selecting them
//     (what a gang needs for its DNS names).
//   - training-operator: Kubeflow training-operator's PyTorchJob of one
//     master and n-1 workers of the same pod, the operator run with its
//     manifests' defaults (only when -training-operator names its binary).
func (b *bench) kubeGang(kubeconfig string, n int) []row {
	rc, _, err := kube.RESTConfig(kube.Config{Kubeconfig: kubeconfig})
	must(err)
	cs, err := kubernetes.NewForConfig(rc)
	must(err)
	dyn, err := dynamic.NewForConfig(rc)
	must(err)
	var op *operator
	if *operatorBin != "" {
		op, err = startOperator(cs, dyn, kubeconfig, *operatorBin, *operatorCRDs, b.dir)
		must(err)
		defer op.stop()
	}
	var kilnTimes, rawTimes, svcTimes, opTimes []time.Duration
	for i := range kubeRuns {
		kilnTimes = append(kilnTimes, b.kilnGang(cs, kubeconfig, n, i))
		rawTimes = append(rawTimes, barePods(cs, n, i, false))
		if op != nil {
			opTimes = append(opTimes, operatorGang(cs, dyn, n, i))
		}
		svcTimes = append(svcTimes, barePods(cs, n, i, true))
		fmt.Fprintf(os.Stderr, "kube round %d: kiln %s, bare pods %s, bare pods + Service %s%s\n", i+1, ms(kilnTimes[i]),
			ms(rawTimes[i]), ms(svcTimes[i]), ifSome(opTimes, i, ", training-operator "))
	}
	k, r, s := median(slices.Clone(kilnTimes)), median(slices.Clone(rawTimes)), median(slices.Clone(svcTimes))
	rows := []row{{
		name: fmt.Sprintf("submit a %d-node TrainJob to all pods Running (kwok, median of %d)", n, kubeRuns), kiln: ms(k),
		raw: ms(r) + " (bare pods)", ratio: ratio(k, r), extra: spread(kilnTimes),
		target: "<= 1.2x", met: float64(k) <= 1.2*float64(r),
	}, {
		name: "  the same against bare pods + a headless Service", kiln: ms(k),
		raw: ms(s), ratio: ratio(k, s), extra: spread(svcTimes), target: "(no target)", met: true,
	}}
	if op != nil {
		o := median(slices.Clone(opTimes))
		rows = append(rows, row{
			name: fmt.Sprintf("  the same against training-operator's PyTorchJob (1+%d)", n-1), kiln: ms(k),
			raw: ms(o), ratio: ratio(k, o), extra: spread(opTimes), target: "<= 1.0x", met: k <= o,
		})
	}
	return rows
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// spread is the range of the samples, for the table's notes column.
func spread(d []time.Duration) string {
	return "range " + ms(slices.Min(d)) + "-" + ms(slices.Max(d))
}

func ifSome(d []time.Duration, i int, label string) string {
	if i >= len(d) {
		return ""
	}
	return label + ms(d[i])
}

// namespace creates a fresh namespace and returns a function deleting it.
func namespace(cs kubernetes.Interface, name string) func() {
	ctx := context.Background()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	must(err)
	return func() {
		_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		for { // wait, so the next round has the nodes to itself
			if _, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err != nil {
				return
			}
			<-time.After(100 * time.Millisecond)
		}
	}
}

// allRunning watches ns until n pods are Running and returns when the
// last one was seen Running.
func allRunning(cs kubernetes.Interface, ns string, n int) (<-chan time.Time, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	must(err)
	done := make(chan time.Time, 1)
	go func() {
		running := map[string]bool{}
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && p.Status.Phase == corev1.PodRunning {
				running[p.Name] = true
				if len(running) == n {
					done <- time.Now()
					return
				}
			}
		}
		close(done)
	}()
	return done, func() { w.Stop(); cancel() }
}

func (b *bench) kilnGang(cs kubernetes.Interface, kubeconfig string, n, i int) time.Duration {
	ns := fmt.Sprintf("kiln-bench-kiln-%d", i)
	defer namespace(cs, ns)()
	home := filepath.Join(b.dir, ns)
	must(os.MkdirAll(home, 0o755))
	must(os.WriteFile(filepath.Join(home, "config.yaml"), fmt.Appendf(nil,
		"backend: kubernetes\nkubernetes: {kubeconfig: %s, namespace: %s}\n", kubeconfig, ns), 0o644))
	file := b.write("kube-gang", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: gang}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: %s
    numNodes: %d
    numProcPerNode: 1
    command: [torchrun, train.py]
    resourcesPerNode: {cpu: %s}
`, gangImage, n, gangCPU))
	done, stop := allRunning(cs, ns, n)
	defer stop()
	cmd := exec.Command(b.kiln, "--home", home, "run", "-q", file)
	must(cmd.Start())
	end, ok := <-done
	if !ok {
		panic("the TrainJob's pods did not all run")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	out, err := exec.Command(b.kiln, "--home", home, "get", "runs", "-o", "json").Output()
	must(err)
	return end.Sub(createdAt(out))
}

// barePods creates n pods as plain as the gang's, and with service a
// headless Service selecting them (as a gang has), and times them to Running.
func barePods(cs kubernetes.Interface, n, i int, service bool) time.Duration {
	ns := fmt.Sprintf("kiln-bench-raw-%d-%v", i, service)
	defer namespace(cs, ns)()
	done, stop := allRunning(cs, ns, n)
	defer stop()
	start := time.Now()
	if service {
		_, err := cs.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "bare"},
			Spec:       corev1.ServiceSpec{ClusterIP: "None", Selector: map[string]string{"app": "bare"}, PublishNotReadyAddresses: true},
		}, metav1.CreateOptions{})
		must(err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, kube.CreateWorkers) // as many at a time as kiln creates
	for k := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "bare-" + strconv.Itoa(k), Labels: map[string]string{"app": "bare"}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
					Name: "main", Image: gangImage, Command: []string{"torchrun", "train.py"},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(gangCPU)}},
				}}},
			}
			_, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
			must(err)
		})
	}
	wg.Wait()
	end, ok := <-done
	if !ok {
		panic("the bare pods did not all run")
	}
	return end.Sub(start)
}

// createdAt is when the newest run in kiln's JSON list was submitted.
func createdAt(runsJSON []byte) time.Time {
	runs, err := runList(runsJSON)
	must(err)
	return runs[0].CreatedAt
}
