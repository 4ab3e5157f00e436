package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/kube"
)

// kubeGang times submit -> all pods of an n-node TrainJob Running on the
// test cluster, against the same client creating n bare pods (same
// requests, same parallelism) until they run, and the same with the
// headless Service a gang needs for its DNS names: medians of 3, alternating.
func (b *bench) kubeGang(kubeconfig string, n int) []row {
	rc, _, err := kube.RESTConfig(kube.Config{Kubeconfig: kubeconfig})
	must(err)
	cs, err := kubernetes.NewForConfig(rc)
	must(err)
	var kilnTimes, rawTimes, svcTimes []time.Duration
	for i := range 3 {
		kilnTimes = append(kilnTimes, b.kilnGang(cs, kubeconfig, n, i))
		rawTimes = append(rawTimes, barePods(cs, n, i, false))
		svcTimes = append(svcTimes, barePods(cs, n, i, true))
	}
	k, r, s := median(kilnTimes), median(rawTimes), median(svcTimes)
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	return []row{{
		name: fmt.Sprintf("submit a %d-node TrainJob to all pods Running (kwok)", n), kiln: ms(k),
		raw: ms(r) + " (bare pods)", ratio: ratio(k, r), target: "<= 1.5x", met: float64(k) <= 1.5*float64(r),
	}, {
		name: "  the same against bare pods + a headless Service", kiln: ms(k),
		raw: ms(s), ratio: ratio(k, s), target: "(no target)", met: true,
	}}
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
    image: ghcr.io/example/ddp:1.0
    numNodes: %d
    numProcPerNode: 1
    command: [torchrun, train.py]
    resourcesPerNode: {cpu: 100m}
`, n))
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
	sem := make(chan struct{}, 16) // the backend's parallelism
	for k := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "bare-" + strconv.Itoa(k), Labels: map[string]string{"app": "bare"}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
					Name: "main", Image: "ghcr.io/example/ddp:1.0", Command: []string{"torchrun", "train.py"},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
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
	var runs []apiv1.Run
	must(json.Unmarshal(runsJSON, &runs))
	return runs[0].CreatedAt
}
