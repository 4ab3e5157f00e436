// Package testcluster connects tests to the real Kubernetes control plane
// that make k8s-up starts, each test in a namespace of its own.
package testcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is the test cluster and the test's namespace.
type Cluster struct {
	Kubeconfig string
	Namespace  string
	Client     kubernetes.Interface
}

// Connect connects to the test cluster ($KILN_KUBECONFIG, else the
// repository's .k8s/kubeconfig) and creates a namespace that is deleted
// when the test ends. Without a cluster the test is skipped, unless
// KILN_REQUIRE_K8S=1 (make test, CI) makes that a failure.
func Connect(t testing.TB) *Cluster {
	t.Helper()
	kc := os.Getenv("KILN_KUBECONFIG")
	if kc == "" {
		_, file, _, _ := runtime.Caller(0)
		kc = filepath.Join(filepath.Dir(file), "..", "..", ".k8s", "kubeconfig")
	}
	cs, err := client(kc)
	if err != nil {
		if os.Getenv("KILN_REQUIRE_K8S") == "1" {
			t.Fatalf("the test cluster is required (KILN_REQUIRE_K8S=1) but not reachable through %s: %v", kc, err)
		}
		t.Skipf("no test cluster (make k8s-up): %v", err)
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := "kiln-test-" + hex.EncodeToString(b)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return &Cluster{Kubeconfig: kc, Namespace: ns, Client: cs}
}

func client(kubeconfig string) (*kubernetes.Clientset, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	_, err = cs.Discovery().ServerVersion()
	return cs, err
}
