package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// Kubeflow training-operator v1, run out of cluster for the kube group's
// third baseline. hack/training-operator.sh builds it from its Go module
// (into .k8s/bin, never committed) and names its CRDs in the module cache.
var (
	crdGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	pytorchJobGVR = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
)

const (
	operatorNS = "kiln-bench-training-operator"
	// operatorCertDir is where the operator's certificate rotator looks
	// for its webhook certificate (a constant of pkg/cert; in a pod the
	// Secret is mounted there).
	operatorCertDir = "/tmp/k8s-webhook-server/serving-certs"
	pytorchJobCRD   = "pytorchjobs.kubeflow.org"
)

// operator is a running training-operator.
type operator struct {
	cmd *exec.Cmd
	log string
	cs  kubernetes.Interface
	dyn dynamic.Interface
}

// startOperator applies the PyTorchJob CRD and starts the operator as
// deployed by its manifests (default flags: one controller thread, client
// QPS 20, burst 30; cluster-wide), with only the PyTorchJob scheme, no
// gang scheduler, and its metrics and probe servers off. It needs no
// webhook to run PyTorchJobs, but waits for its certificates before it
// starts any controller: the Secret it fills is written out where a pod
// would mount it, and its webhook configuration is left absent, so the
// API server never calls it.
func startOperator(cs kubernetes.Interface, dyn dynamic.Interface, kubeconfig, bin, crds, dir string) (*operator, error) {
	ctx := context.Background()
	o := &operator{cs: cs, dyn: dyn, log: filepath.Join(dir, "training-operator.log")}
	if err := applyCRD(ctx, dyn, filepath.Join(crds, "kubeflow.org_pytorchjobs.yaml")); err != nil {
		return nil, err
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "training-operator-webhook-cert"}}
	_ = cs.CoreV1().Secrets(operatorNS).Delete(ctx, secret.Name, metav1.DeleteOptions{}) // a fresh certificate each time
	if _, err := cs.CoreV1().Secrets(operatorNS).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(o.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	o.cmd = exec.Command(bin, "--enable-scheme=pytorchjob", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--webhook-server-port="+strconv.Itoa(port), "--zap-log-level=info")
	o.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "MY_POD_NAMESPACE="+operatorNS)
	o.cmd.Stdout, o.cmd.Stderr = logf, logf
	if err := o.cmd.Start(); err != nil {
		return nil, err
	}
	if err := o.mountCerts(ctx, secret.Name); err != nil {
		o.stop()
		return nil, err
	}
	if err := o.waitLog("Starting workers", `"pytorchjob-controller"`); err != nil {
		o.stop()
		return nil, err
	}
	return o, nil
}

// mountCerts waits for the operator to fill its Secret and writes the
// server certificate where it looks for it.
func (o *operator) mountCerts(ctx context.Context, name string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		s, err := o.cs.CoreV1().Secrets(operatorNS).Get(ctx, name, metav1.GetOptions{})
		if err == nil && len(s.Data["tls.crt"]) > 0 && len(s.Data["tls.key"]) > 0 {
			if err := os.MkdirAll(operatorCertDir, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(operatorCertDir, "tls.crt"), s.Data["tls.crt"], 0o600); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(operatorCertDir, "tls.key"), s.Data["tls.key"], 0o600)
		}
		<-time.After(200 * time.Millisecond)
	}
	return fmt.Errorf("training-operator did not write its webhook certificate within a minute; see %s", o.log)
}

// waitLog waits until one line of the operator's log has every part.
func (o *operator) waitLog(parts ...string) error {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if o.cmd.ProcessState != nil {
			break
		}
		b, _ := os.ReadFile(o.log)
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			all := true
			for _, p := range parts {
				all = all && bytes.Contains(line, []byte(p))
			}
			if all {
				return nil
			}
		}
		<-time.After(200 * time.Millisecond)
	}
	return fmt.Errorf("training-operator's PyTorchJob controller did not start; see %s", o.log)
}

// stop ends the operator and removes what startOperator added to the
// cluster.
func (o *operator) stop() {
	ctx := context.Background()
	if o.cmd.Process != nil {
		_ = o.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = o.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = o.cmd.Process.Kill()
			<-done
		}
	}
	_ = o.cs.CoreV1().Namespaces().Delete(ctx, operatorNS, metav1.DeleteOptions{})
	_ = o.dyn.Resource(crdGVR).Delete(ctx, pytorchJobCRD, metav1.DeleteOptions{})
	_ = os.RemoveAll(operatorCertDir)
}

// applyCRD creates the CRD in file unless it exists, and waits until the
// API server serves it.
func applyCRD(ctx context.Context, dyn dynamic.Interface, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("%w (run hack/training-operator.sh)", err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if _, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("applying %s: %w", file, err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		got, err := dyn.Resource(crdGVR).Get(ctx, u.GetName(), metav1.GetOptions{})
		if err == nil && established(got) {
			return nil
		}
		<-time.After(100 * time.Millisecond)
	}
	return errors.New("the PyTorchJob CRD was not established within a minute")
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// pytorchJob is a PyTorchJob of one master and n-1 workers, each pod
// shaped as kiln's gang and the bare pods are (same image, command and
// requests; restart policy Never).
func pytorchJob(n int) *unstructured.Unstructured {
	replica := func(count int) map[string]any {
		return map[string]any{
			"replicas": int64(count), "restartPolicy": "Never",
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "pytorch", "image": gangImage, "command": []any{"torchrun", "train.py"},
				"resources": map[string]any{"requests": map[string]any{"cpu": gangCPU}},
			}}}},
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
		"metadata": map[string]any{"name": "gang"},
		"spec": map[string]any{"pytorchReplicaSpecs": map[string]any{
			"Master": replica(1), "Worker": replica(n - 1),
		}},
	}}
}

// operatorGang times creating an n-pod PyTorchJob to all its pods Running.
func operatorGang(cs kubernetes.Interface, dyn dynamic.Interface, n, i int) time.Duration {
	ns := fmt.Sprintf("kiln-bench-operator-%d", i)
	defer namespace(cs, ns)()
	done, stop := allRunning(cs, ns, n)
	defer stop()
	start := time.Now()
	_, err := dyn.Resource(pytorchJobGVR).Namespace(ns).Create(context.Background(), pytorchJob(n), metav1.CreateOptions{})
	must(err)
	end, ok := <-done
	if !ok {
		panic("the PyTorchJob's pods did not all run")
	}
	return end.Sub(start)
}
