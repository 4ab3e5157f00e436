package deploy

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"kiln.dev/kiln/internal/backend/kube"
)

// chartDir is kiln's Helm chart; its ci/ holds the value sets the tests
// lint, render and (test/e2e) dry-run on the test cluster.
const chartDir = "helm/kiln"

// helm returns Helm built from its Go module by hack/helm.sh (cached in
// .k8s/bin; make helm, and make test before the tests, build it). It reads
// every file of the chart first: helm reads them in a process of its own,
// and go test's cache only sees the files a test opens itself.
func helm(t *testing.T) string {
	t.Helper()
	err := filepath.WalkDir(chartDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("../hack/helm.sh").Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("building Helm (hack/helm.sh): %v\n%s", err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// valueSets are the chart's ci/*-values.yaml files.
func valueSets(t *testing.T) []string {
	t.Helper()
	sets, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(sets) < 6 {
		t.Fatalf("the chart's value sets: %v %v", sets, err)
	}
	return sets
}

// rendered is what helm template made of one value set, by kind.
type rendered struct {
	sa      *corev1.ServiceAccount
	role    *rbacv1.Role
	binding *rbacv1.RoleBinding
	// clusterRole and clusterBinding: only for Kueue's flavors.
	clusterRole    *rbacv1.ClusterRole
	clusterBinding *rbacv1.ClusterRoleBinding
	config         *corev1.ConfigMap
	pvc            *corev1.PersistentVolumeClaim
	dep            *appsv1.Deployment
	svc            *corev1.Service
	kinds          []string
	fileValue      map[string]any // config.yaml
}

// render runs helm template on the chart with the values files and --set
// pairs given, in namespace kiln, and returns its output or its error.
func render(t *testing.T, helmBin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBin, append([]string{"template", "kiln", chartDir, "--namespace", "kiln"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return stderr.String(), err
	}
	return string(out), nil
}

// parse reads helm template's output into typed objects.
func parse(t *testing.T, out string) rendered {
	t.Helper()
	var r rendered
	for _, doc := range strings.Split(out, "\n---") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("a rendered document: %v\n%s", err, doc)
		}
		if meta.Kind == "" {
			continue
		}
		r.kinds = append(r.kinds, meta.Kind)
		var into any
		switch meta.Kind {
		case "ServiceAccount":
			r.sa = &corev1.ServiceAccount{}
			into = r.sa
		case "Role":
			r.role = &rbacv1.Role{}
			into = r.role
		case "RoleBinding":
			r.binding = &rbacv1.RoleBinding{}
			into = r.binding
		case "ClusterRole":
			r.clusterRole = &rbacv1.ClusterRole{}
			into = r.clusterRole
		case "ClusterRoleBinding":
			r.clusterBinding = &rbacv1.ClusterRoleBinding{}
			into = r.clusterBinding
		case "ConfigMap":
			r.config = &corev1.ConfigMap{}
			into = r.config
		case "PersistentVolumeClaim":
			r.pvc = &corev1.PersistentVolumeClaim{}
			into = r.pvc
		case "Deployment":
			r.dep = &appsv1.Deployment{}
			into = r.dep
		case "Service":
			r.svc = &corev1.Service{}
			into = r.svc
		default:
			t.Fatalf("the chart renders a %s the test does not know", meta.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s: %v\n%s", meta.Kind, err, doc)
		}
	}
	if r.config == nil || r.dep == nil || r.svc == nil || r.sa == nil {
		t.Fatalf("the chart rendered %v: want at least a ServiceAccount, a ConfigMap, a Deployment and a Service", r.kinds)
	}
	if err := yaml.Unmarshal([]byte(r.config.Data["config.yaml"]), &r.fileValue); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	return r
}

// values reads a value set.
func values(t *testing.T, path string) map[string]any {
	t.Helper()
	v := map[string]any{}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// get walks v by keys; nil where a key is missing.
func get(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestHelmChartLints: helm lint --strict passes the chart with each value set.
func TestHelmChartLints(t *testing.T) {
	h := helm(t)
	for _, set := range valueSets(t) {
		if out, err := exec.Command(h, "lint", "--strict", chartDir, "--values", set).CombinedOutput(); err != nil {
			t.Errorf("helm lint --strict with %s: %v\n%s", set, err, out)
		}
	}
}

// TestHelmChartRendersEachValueSet renders the chart with each value set
// and checks that the objects fit together as the kustomize base's do, and
// that each value does what values.yaml says.
func TestHelmChartRendersEachValueSet(t *testing.T) {
	h := helm(t)
	for _, set := range valueSets(t) {
		t.Run(filepath.Base(set), func(t *testing.T) {
			out, err := render(t, h, "--values", set)
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, out)
			}
			r := parse(t, out)
			v := values(t, set)
			fitTogether(t, r)
			checkBackend(t, r, v)
			checkStore(t, r, v)
			checkServe(t, r, v)
		})
	}
}

// fitTogether: the Deployment runs as the ServiceAccount the RoleBinding
// binds, mounts the ConfigMap where --config reads it, and listens where
// the Service and the probes look.
func fitTogether(t *testing.T, r rendered) {
	t.Helper()
	pod := r.dep.Spec.Template.Spec
	if pod.ServiceAccountName != r.sa.Name {
		t.Errorf("the Deployment runs as %q, want the ServiceAccount %q", pod.ServiceAccountName, r.sa.Name)
	}
	if r.binding != nil && (r.binding.RoleRef.Name != r.role.Name || len(r.binding.Subjects) != 1 ||
		r.binding.Subjects[0].Name != r.sa.Name || r.binding.Subjects[0].Namespace != "kiln") {
		t.Errorf("the RoleBinding does not bind Role %s to ServiceAccount kiln/%s: %+v %+v", r.role.Name, r.sa.Name, r.binding.RoleRef, r.binding.Subjects)
	}
	c := pod.Containers[0]
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, vol := range pod.Volumes {
		if _, ok := mounts[vol.Name]; !ok {
			t.Errorf("volume %s is mounted nowhere", vol.Name)
		}
		if vol.ConfigMap != nil {
			i := slices.Index(c.Args, "--config")
			if vol.ConfigMap.Name != r.config.Name || i < 0 || c.Args[i+1] != mounts[vol.Name]+"/config.yaml" {
				t.Errorf("--config (args %q) is not config.yaml of the ConfigMap %s (volume %s at %s)", c.Args, r.config.Name, vol.Name, mounts[vol.Name])
			}
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if len(c.Ports) != 1 || r.svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name ||
		env["KILN_ADDR"] != "0.0.0.0:8420" || c.Ports[0].ContainerPort != 8420 {
		t.Errorf("the Service's target port %v is not where kiln serve listens (KILN_ADDR %s, ports %+v)", r.svc.Spec.Ports[0].TargetPort, env["KILN_ADDR"], c.Ports)
	}
	if env["KILN_HOME"] != mounts["home"] {
		t.Errorf("KILN_HOME %s is not the volume home (at %s)", env["KILN_HOME"], mounts["home"])
	}
	for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		if p.HTTPGet.Port.StrVal != c.Ports[0].Name {
			t.Errorf("a probe looks at port %v, kiln serves on %s", p.HTTPGet.Port, c.Ports[0].Name)
		}
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %s, readiness %s", c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}
	if sc := c.SecurityContext; sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("the container should drop every capability, with a read-only root and no privilege escalation: %+v", sc)
	}
}

// checkBackend: the kubernetes backend gets exactly kube.Permissions of
// its gang scheduler and the pod's token; the local one neither, and its
// isolation as values.yaml says.
func checkBackend(t *testing.T, r rendered, v map[string]any) {
	t.Helper()
	pod := r.dep.Spec.Template.Spec
	args := pod.Containers[0].Args
	isolation := "auto"
	if s, ok := get(v, "isolation").(string); ok {
		isolation = s
	}
	if i := slices.Index(args, "--isolation"); i < 0 || args[i+1] != isolation {
		t.Errorf("kiln serve's args %q: want --isolation %s", args, isolation)
	}
	if get(v, "backend", "type") == "local" {
		if r.role != nil || r.binding != nil || *pod.AutomountServiceAccountToken || *r.sa.AutomountServiceAccountToken {
			t.Errorf("the local backend needs no Role (%v), RoleBinding (%v) nor token (%v)", r.role != nil, r.binding != nil, *pod.AutomountServiceAccountToken)
		}
		if get(r.fileValue, "backend") != "local" || get(r.fileValue, "kubernetes") != nil {
			t.Errorf("config.yaml: %v, want backend local and no kubernetes section", r.fileValue)
		}
		users := isolation == "users"
		sc, csc := pod.SecurityContext, pod.Containers[0].SecurityContext
		if root := sc.RunAsUser != nil && *sc.RunAsUser == 0; root != users {
			t.Errorf("isolation %s: the pod runs as %v; kiln runs as root exactly for isolation users", isolation, sc.RunAsUser)
		}
		if users && !slices.Equal(csc.Capabilities.Add, []corev1.Capability{"SETUID", "SETGID", "CHOWN", "DAC_OVERRIDE", "KILL"}) {
			t.Errorf("isolation users: capabilities %v, want deploy/systemd's five", csc.Capabilities.Add)
		}
		return
	}
	gs, _ := get(v, "backend", "kubernetes", "gangScheduler").(string)
	if r.role == nil {
		t.Fatal("the kubernetes backend has no Role")
	}
	want := gs
	if want == "none" {
		want = ""
	}
	wantRules, wantCluster := kube.Permissions(want), []rbacv1.PolicyRule(nil)
	if kq, _ := get(v, "backend", "rbac", "kueue").(bool); kq {
		ns, cluster := kube.KueuePermissions()
		wantRules, wantCluster = append(wantRules, ns...), cluster
	}
	if diff := cmp.Diff(kube.Grants(wantRules), kube.Grants(r.role.Rules)); diff != "" {
		t.Errorf("the Role grants (+) other than kube.Permissions(%q) (-):\n%s", want, diff)
	}
	var gotCluster []rbacv1.PolicyRule
	if r.clusterRole != nil {
		gotCluster = r.clusterRole.Rules
		if b := r.clusterBinding; b == nil || b.RoleRef.Name != r.clusterRole.Name || len(b.Subjects) != 1 || b.Subjects[0].Name != r.sa.Name {
			t.Errorf("the ClusterRole %s is not bound to the service account: %+v", r.clusterRole.Name, b)
		}
	}
	if diff := cmp.Diff(kube.Grants(wantCluster), kube.Grants(gotCluster)); diff != "" {
		t.Errorf("the ClusterRole grants (+) other than kube.KueuePermissions' cluster rules (-):\n%s", diff)
	}
	if got, _ := get(r.fileValue, "kubernetes", "gangScheduler").(string); got != want {
		t.Errorf("config.yaml's kubernetes.gangScheduler %q, want %q", got, want)
	}
	if !*pod.AutomountServiceAccountToken || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("the kubernetes backend needs the pod's token and no root")
	}
	if get(r.fileValue, "kubernetes", "kilnImage") != pod.Containers[0].Image {
		t.Errorf("kubernetes.kilnImage %v: want the server's own image %s", get(r.fileValue, "kubernetes", "kilnImage"), pod.Containers[0].Image)
	}
}

// checkStore: SQLite on a claim with one replica replaced, not rolled;
// PostgreSQL's URL and secret key from Secrets, with replicas.
func checkStore(t *testing.T, r rendered, v map[string]any) {
	t.Helper()
	pod := r.dep.Spec.Template.Spec
	env := map[string]corev1.EnvVar{}
	for _, e := range pod.Containers[0].Env {
		env[e.Name] = e
	}
	var home corev1.Volume
	for _, vol := range pod.Volumes {
		if vol.Name == "home" {
			home = vol
		}
	}
	if get(v, "store", "type") != "postgres" {
		if *r.dep.Spec.Replicas != 1 || r.dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("a SQLite home takes one server, replaced not rolled: replicas %d, strategy %s", *r.dep.Spec.Replicas, r.dep.Spec.Strategy.Type)
		}
		if r.pvc == nil || home.PersistentVolumeClaim == nil || home.PersistentVolumeClaim.ClaimName != r.pvc.Name {
			t.Errorf("KILN_HOME should be the chart's claim: volume %+v", home)
		}
		if _, ok := env["KILN_STORE"]; ok {
			t.Error("SQLite needs no KILN_STORE")
		}
		return
	}
	if r.pvc != nil || home.EmptyDir == nil {
		t.Errorf("on PostgreSQL a replica's home is its own emptyDir and no claim is made: %+v", home)
	}
	ref := env["KILN_STORE"].ValueFrom
	if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != get(v, "store", "postgres", "secretName") || env["KILN_STORE"].Value != "" {
		t.Errorf("KILN_STORE should come from the Secret %v alone: %+v", get(v, "store", "postgres", "secretName"), env["KILN_STORE"])
	}
	if want := float64(*r.dep.Spec.Replicas); get(v, "replicas") != want || r.dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("replicas %v (want %v), strategy %s", *r.dep.Spec.Replicas, get(v, "replicas"), r.dep.Spec.Strategy.Type)
	}
	keyFile := env["KILN_SECRET_KEY_FILE"].Value
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted = mounted || (m.Name == "secret-key" && strings.HasPrefix(keyFile, m.MountPath+"/"))
	}
	if !mounted {
		t.Errorf("KILN_SECRET_KEY_FILE %q is not in the mounted Secret %v", keyFile, get(v, "store", "postgres", "secretKeySecretName"))
	}
}

// checkServe: TLS from its Secret with probes over HTTPS; the party and
// the rest of config.yaml as given.
func checkServe(t *testing.T, r rendered, v map[string]any) {
	t.Helper()
	c := r.dep.Spec.Template.Spec.Containers[0]
	secret, _ := get(v, "tls", "secretName").(string)
	scheme := corev1.URISchemeHTTP
	if secret != "" {
		scheme = corev1.URISchemeHTTPS
		i, j := slices.Index(c.Args, "--tls-cert"), slices.Index(c.Args, "--tls-key")
		var tlsVol string
		for _, vol := range r.dep.Spec.Template.Spec.Volumes {
			if vol.Secret != nil && vol.Secret.SecretName == secret {
				tlsVol = vol.Name
			}
		}
		var at string
		for _, m := range c.VolumeMounts {
			if m.Name == tlsVol {
				at = m.MountPath
			}
		}
		if i < 0 || j < 0 || at == "" || c.Args[i+1] != at+"/tls.crt" || c.Args[j+1] != at+"/tls.key" {
			t.Errorf("TLS: args %q, the Secret %s mounted at %q", c.Args, secret, at)
		}
	}
	for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		if p.HTTPGet.Scheme != scheme {
			t.Errorf("a probe asks over %s, kiln serves %s", p.HTTPGet.Scheme, scheme)
		}
	}
	if name := get(v, "party", "name"); name != nil {
		for _, k := range []string{"name", "advertise", "idleTimeout"} {
			if get(r.fileValue, "party", k) != get(v, "party", k) {
				t.Errorf("config.yaml's party.%s %v, want %v", k, get(r.fileValue, "party", k), get(v, "party", k))
			}
		}
	}
	if extra := get(v, "config"); extra != nil {
		for k, want := range extra.(map[string]any) {
			if diff := cmp.Diff(want, get(r.fileValue, k)); diff != "" {
				t.Errorf("config.yaml's %s (-values +rendered):\n%s", k, diff)
			}
		}
	}
}

// TestHelmChartIsTheKustomizeBase: with no values, the chart deploys what
// deploy/kubernetes does: the same Role, the same configuration, the same
// container (command, security, resources, probes, environment, mounts)
// and the same claim and Service.
func TestHelmChartIsTheKustomizeBase(t *testing.T) {
	out, err := render(t, helm(t))
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	r := parse(t, out)
	var (
		dep  appsv1.Deployment
		role rbacv1.Role
		pvc  corev1.PersistentVolumeClaim
		svc  corev1.Service
		cfg  map[string]any
	)
	read(t, "kubernetes/deployment.yaml", &dep)
	read(t, "kubernetes/role.yaml", &role)
	read(t, "kubernetes/pvc.yaml", &pvc)
	read(t, "kubernetes/service.yaml", &svc)
	b, err := os.ReadFile("kubernetes/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kube.Grants(role.Rules), kube.Grants(r.role.Rules)); diff != "" {
		t.Errorf("the chart's Role (+) and the base's (-):\n%s", diff)
	}
	kust, chart := dep.Spec.Template.Spec, r.dep.Spec.Template.Spec
	if diff := cmp.Diff(kust.SecurityContext, chart.SecurityContext); diff != "" {
		t.Errorf("pod security (-base +chart):\n%s", diff)
	}
	if kust.TerminationGracePeriodSeconds == nil || *kust.TerminationGracePeriodSeconds != *chart.TerminationGracePeriodSeconds {
		t.Error("the chart's grace period differs from the base's")
	}
	kc, cc := kust.Containers[0], chart.Containers[0]
	// The port is named api in the chart, which serves HTTPS too.
	for _, p := range []*corev1.Probe{kc.StartupProbe, kc.LivenessProbe, kc.ReadinessProbe} {
		p.HTTPGet.Port.StrVal, p.HTTPGet.Scheme = "api", corev1.URISchemeHTTP
	}
	kc.Ports[0].Name = "api"
	for _, d := range []struct {
		what       string
		base, helm any
	}{
		{"command", kc.Command, cc.Command},
		{"args", kc.Args, cc.Args[:3]},
		{"env", kc.Env, cc.Env},
		{"ports", kc.Ports, cc.Ports},
		{"probes", []*corev1.Probe{kc.StartupProbe, kc.LivenessProbe, kc.ReadinessProbe}, []*corev1.Probe{cc.StartupProbe, cc.LivenessProbe, cc.ReadinessProbe}},
		{"resources", kc.Resources, cc.Resources},
		{"security", kc.SecurityContext, cc.SecurityContext},
		{"mounts", kc.VolumeMounts, cc.VolumeMounts},
		{"claim", pvc.Spec, r.pvc.Spec},
		{"service port", svc.Spec.Ports[0].Port, r.svc.Spec.Ports[0].Port},
	} {
		if diff := cmp.Diff(d.base, d.helm); diff != "" {
			t.Errorf("%s (-base +chart):\n%s", d.what, diff)
		}
	}
	for k, want := range cfg {
		if diff := cmp.Diff(want, r.fileValue[k]); k != "kubernetes" && diff != "" {
			t.Errorf("config.yaml's %s (-base +chart):\n%s", k, diff)
		}
	}
	for k, want := range cfg["kubernetes"].(map[string]any) {
		if got := get(r.fileValue, "kubernetes", k); got != want {
			t.Errorf("config.yaml's kubernetes.%s: base %v, chart %v", k, want, got)
		}
	}
}

// TestHelmChartRefusesWhatCannotWork: values that cannot work together
// fail helm template, saying why, before anything reaches a cluster.
func TestHelmChartRefusesWhatCannotWork(t *testing.T) {
	h := helm(t)
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"--set", "replicas=2"}, "replicas > 1 needs store.type postgres"},
		{[]string{"--set", "store.type=postgres"}, "needs store.postgres.secretName"},
		{[]string{"--set", "store.type=postgres,store.postgres.secretName=db,replicas=2"}, "secretKeySecretName"},
		{[]string{"--set", "store.type=postgres,store.postgres.secretName=db,store.postgres.secretKeySecretName=k,replicas=2,backend.type=local"}, "backend local runs tasks in the server's pod"},
		{[]string{"--set", "party.advertise=https://a.example"}, "party.advertise needs party.name"},
		{[]string{"--set", "isolation=chroot"}, "value must be one of 'auto', 'users', 'landlock', 'none'"},
		{[]string{"--set", "backend.kubernetes.gangScheduler=kueue"}, "gangScheduler"},
		{[]string{"--set", "party.name=Lab_A"}, "party/name"},
	} {
		out, err := render(t, h, c.set...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("helm template %q: %v %s; want a refusal saying %q", c.set, err, out, c.want)
		}
	}
}
