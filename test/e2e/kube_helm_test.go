package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// chartDir is kiln's Helm chart.
const chartDir = "../../deploy/helm/kiln"

// TestHelmChartOnTheCluster renders deploy/helm/kiln with Helm (built from
// its Go module by hack/helm.sh) for each of its value sets (ci/) in the
// test's namespace, and has the API server take every object as a
// server-side dry run, as helm install would send them. Then, as
// TestKubeServerWithItsServiceAccount does for the kustomize base, it
// creates the default set's ServiceAccount, Role and RoleBinding for real
// and runs kiln serve out of the cluster as that ServiceAccount, with the
// chart's config.yaml and arguments: a two-node TrainJob succeeds and the
// API server refused kiln nothing.
func TestHelmChartOnTheCluster(t *testing.T) {
	c := newCluster(t)
	out, err := exec.Command("../../hack/helm.sh").Output()
	if err != nil {
		t.Fatalf("building Helm (hack/helm.sh): %v", err)
	}
	helm := strings.TrimSpace(string(out))
	rc, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(sets) == 0 {
		t.Fatalf("the chart's value sets: %v %v", sets, err)
	}
	var live []*unstructured.Unstructured
	for _, set := range sets {
		objs := helmTemplate(t, helm, c.ns, set)
		for _, u := range objs {
			createIn(t, dyn, c.ns, u, true, filepath.Base(set))
		}
		if filepath.Base(set) == "default-values.yaml" {
			live = objs
		}
	}

	var dep appsv1.Deployment
	var config string
	for _, u := range live {
		switch u.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding":
			createIn(t, dyn, c.ns, u, false, "default-values.yaml")
		case "Deployment":
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &dep); err != nil {
				t.Fatal(err)
			}
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cm); err != nil {
				t.Fatal(err)
			}
			config = cm.Data["config.yaml"]
		}
	}
	servedAsTheChartSays(t, c, dep, config)
}

// helmTemplate renders the chart with values file set as release kiln in
// namespace ns.
func helmTemplate(t *testing.T, helm, ns, set string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(helm, "template", "kiln", chartDir, "--namespace", ns, "--values", set)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template --values %s: %v\n%s", set, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// createIn creates u in namespace ns, as a server-side dry run if dryRun.
func createIn(t *testing.T, dyn dynamic.Interface, ns string, u *unstructured.Unstructured, dryRun bool, set string) {
	t.Helper()
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		t.Fatal(err)
	}
	gvr := gv.WithResource(strings.ToLower(u.GetKind()) + "s")
	opts := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	ri := dyn.Resource(gvr).Namespace(ns)
	if strings.HasPrefix(u.GetKind(), "Cluster") { // the ClusterRole for Kueue's flavors, and its binding
		ri = dyn.Resource(gvr)
	}
	if _, err := ri.Create(t.Context(), u, opts); err != nil {
		t.Fatalf("%s: creating %s %s (dry run: %v): %v", set, u.GetKind(), u.GetName(), dryRun, err)
	}
}

// servedAsTheChartSays runs kiln serve as the chart's ServiceAccount with
// its config.yaml and the Deployment's arguments, and a TrainJob through it.
func servedAsTheChartSays(t *testing.T, c *cluster, dep appsv1.Deployment, config string) {
	t.Helper()
	pod := dep.Spec.Template.Spec
	kc := serviceAccountKubeconfig(t, c, pod.ServiceAccountName)
	home := newHome(t)
	set := exec.Command(kilnBin, "--home", home, "secret", "set", "api-key")
	set.Stdin = strings.NewReader("s3cr3t\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("kiln secret set: %v %s", err, out)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	args := slices.Clone(pod.Containers[0].Args)
	if len(args) < 3 || args[0] != "serve" || args[1] != "--config" {
		t.Fatalf("the chart's kiln runs %q, want serve --config FILE ...", args)
	}
	args[2] = cfgPath
	base, admin, serverLog := serveDeployed(t, home, append(args[1:], "--kubeconfig", kc)...)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(serverLog)
			t.Logf("kiln serve's log:\n%s", b)
		}
	})
	run := postRun(t, base, admin, deployedTrainJob)
	waitServed(t, base, admin, run.ID, apiv1.PhaseSucceeded)
	if refused := refusals(serverLog); len(refused) > 0 {
		t.Errorf("kiln was refused by the API server as the chart's ServiceAccount:\n%s", strings.Join(refused, "\n"))
	}
}
