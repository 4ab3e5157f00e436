// Package deploy holds the manifests that deploy kiln serve (kubernetes/,
// applied with kubectl apply -k; helm/kiln, its Helm chart) and its
// systemd unit (systemd/). Its tests check the manifests and the chart
// against the code they deploy; test/e2e's
// TestKubeServerWithItsServiceAccount and TestHelmChartOnTheCluster apply
// them to the test cluster.
package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"kiln.dev/kiln/internal/backend/kube"
)

// kustomization is the part of a kustomization.yaml (or a Component)
// that the tests read.
type kustomization struct {
	APIVersion         string   `json:"apiVersion"`
	Kind               string   `json:"kind"`
	Labels             []any    `json:"labels"`
	Images             []any    `json:"images"`
	Namespace          string   `json:"namespace"`
	Resources          []string `json:"resources"`
	ConfigMapGenerator []struct {
		Name  string   `json:"name"`
		Files []string `json:"files"`
	} `json:"configMapGenerator"`
	Patches []struct {
		Target struct{ Kind, Name string } `json:"target"`
		Patch  string                      `json:"patch"`
	} `json:"patches"`
}

// jsonPatch is one operation of a JSON 6902 patch.
type jsonPatch struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

func read(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestRoleGrantsWhatTheBackendNeeds: the Role is the backend's own table
// of permissions, no verb more or less, and so is it with each gang
// scheduler's component applied.
func TestRoleGrantsWhatTheBackendNeeds(t *testing.T) {
	var role rbacv1.Role
	read(t, "kubernetes/role.yaml", &role)
	if diff := cmp.Diff(kube.Grants(kube.Permissions("")), kube.Grants(role.Rules)); diff != "" {
		t.Errorf("kubernetes/role.yaml grants (+) other than kube.Permissions(\"\") (-):\n%s", diff)
	}
	for _, gs := range []string{kube.GangCoscheduling, kube.GangVolcano} {
		var k kustomization
		read(t, filepath.Join("kubernetes/components", gs, "kustomization.yaml"), &k)
		rules, args := slices.Clone(role.Rules), []string(nil)
		for _, p := range k.Patches {
			var ops []jsonPatch
			if err := yaml.Unmarshal([]byte(p.Patch), &ops); err != nil {
				t.Fatalf("component %s: patch of %s: %v", gs, p.Target.Kind, err)
			}
			for _, op := range ops {
				switch {
				case p.Target.Kind == "Role" && op.Op == "add" && op.Path == "/rules/-":
					var r rbacv1.PolicyRule
					if err := json.Unmarshal(op.Value, &r); err != nil {
						t.Fatal(err)
					}
					rules = append(rules, r)
				case p.Target.Kind == "Deployment" && op.Op == "add" && op.Path == "/spec/template/spec/containers/0/args/-":
					var a string
					if err := json.Unmarshal(op.Value, &a); err != nil {
						t.Fatal(err)
					}
					args = append(args, a)
				default:
					t.Errorf("component %s: a patch the test does not know: %s %s %s", gs, p.Target.Kind, op.Op, op.Path)
				}
			}
		}
		if diff := cmp.Diff(kube.Grants(kube.Permissions(gs)), kube.Grants(rules)); diff != "" {
			t.Errorf("with component %s the Role grants (+) other than kube.Permissions(%q) (-):\n%s", gs, gs, diff)
		}
		if want := []string{"--gang-scheduler=" + gs}; !slices.Equal(args, want) {
			t.Errorf("component %s adds %q to kiln serve's arguments, want %q", gs, args, want)
		}
	}
}

// TestKustomizationListsEveryManifest: kubectl apply -k applies every
// manifest of the directory, and only those.
func TestKustomizationListsEveryManifest(t *testing.T) {
	var k kustomization
	read(t, "kubernetes/kustomization.yaml", &k)
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && name != "config.yaml" {
			want = append(want, name)
		}
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kustomization.yaml's resources (+) are not the directory's manifests (-):\n%s", diff)
	}
	if len(k.ConfigMapGenerator) != 1 || !slices.Equal(k.ConfigMapGenerator[0].Files, []string{"config.yaml"}) {
		t.Errorf("kustomization.yaml should make one ConfigMap of config.yaml: %+v", k.ConfigMapGenerator)
	}
}

// TestManifestsFitTogether: the Deployment runs as the ServiceAccount the
// RoleBinding binds, mounts the claim and the generated ConfigMap where
// kiln serve reads them, and listens where the Service and probes look.
func TestManifestsFitTogether(t *testing.T) {
	var (
		sa      corev1.ServiceAccount
		binding rbacv1.RoleBinding
		role    rbacv1.Role
		pvc     corev1.PersistentVolumeClaim
		svc     corev1.Service
		dep     appsv1.Deployment
		k       kustomization
	)
	read(t, "kubernetes/serviceaccount.yaml", &sa)
	read(t, "kubernetes/rolebinding.yaml", &binding)
	read(t, "kubernetes/role.yaml", &role)
	read(t, "kubernetes/pvc.yaml", &pvc)
	read(t, "kubernetes/service.yaml", &svc)
	read(t, "kubernetes/deployment.yaml", &dep)
	read(t, "kubernetes/kustomization.yaml", &k)
	pod := dep.Spec.Template.Spec
	if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name ||
		len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != sa.Name {
		t.Errorf("the RoleBinding does not bind Role %s to ServiceAccount %s: %+v %+v", role.Name, sa.Name, binding.RoleRef, binding.Subjects)
	}
	if pod.ServiceAccountName != sa.Name {
		t.Errorf("the Deployment runs as %q, want the ServiceAccount %q", pod.ServiceAccountName, sa.Name)
	}
	if *dep.Spec.Replicas != 1 || dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("a SQLite home takes one server, replaced not rolled: replicas %d, strategy %s", *dep.Spec.Replicas, dep.Spec.Strategy.Type)
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, v := range pod.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			if v.PersistentVolumeClaim.ClaimName != pvc.Name || mounts[v.Name] != env["KILN_HOME"] {
				t.Errorf("KILN_HOME %s is not the claim %s (volume %s at %s)", env["KILN_HOME"], pvc.Name, v.Name, mounts[v.Name])
			}
		case v.ConfigMap != nil:
			i := slices.Index(c.Args, "--config")
			if v.ConfigMap.Name != k.ConfigMapGenerator[0].Name || i < 0 || i+1 == len(c.Args) ||
				c.Args[i+1] != mounts[v.Name]+"/config.yaml" {
				t.Errorf("kiln serve's --config (args %q) is not config.yaml of the ConfigMap %s (volume %s at %s)",
					c.Args, k.ConfigMapGenerator[0].Name, v.Name, mounts[v.Name])
			}
		}
	}
	if len(c.Ports) != 1 || svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name ||
		!strings.HasSuffix(env["KILN_ADDR"], ":"+strconv.Itoa(int(c.Ports[0].ContainerPort))) {
		t.Errorf("the Service's target port %v is not where kiln serve listens (KILN_ADDR %s, ports %+v)",
			svc.Spec.Ports[0].TargetPort, env["KILN_ADDR"], c.Ports)
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %s, readiness %s; want kiln serve's /healthz and /readyz",
			c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}
	if pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("kiln serve with the kubernetes backend needs no root: the pod should say runAsNonRoot")
	}
}
