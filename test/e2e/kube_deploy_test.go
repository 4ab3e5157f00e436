package e2e

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// deployDir holds the manifests of kiln serve on a cluster.
const deployDir = "../../deploy/kubernetes"

// deployedTrainJob is a two-node torch job whose ranks run 3s and
// succeed, with a secret in its environment (so kiln makes a Secret).
const deployedTrainJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: deployed}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: ghcr.io/example/ddp:1.0
    numNodes: 2
    numProcPerNode: 1
    command: [torchrun, /app/train.py]
    resourcesPerNode: {cpu: "1", memory: 1Gi}
    env: [{name: API_KEY, valueFrom: {secret: api-key}}]
  podTemplate:
    metadata:
      annotations: {kwok.kiln.dev/exit-code: "0", kwok.kiln.dev/delay: 3s}
    spec:
      nodeSelector: {type: kwok}
`

// TestKubeServerWithItsServiceAccount applies the ServiceAccount, Role
// and RoleBinding of deploy/kubernetes to the test's namespace (and the
// rest of its manifests as a server-side dry run), then runs kiln serve
// out of the cluster as that ServiceAccount, with the token the
// TokenRequest API gives it and deploy/kubernetes/config.yaml. A two-node
// TrainJob runs, its logs are read, it succeeds and everything it made is
// deleted, then its run is, and kiln was refused nothing on the way. The
// same token may not do what the Role does not grant.
func TestKubeServerWithItsServiceAccount(t *testing.T) {
	c := newCluster(t)
	sa := applyManifests(t, c)
	kc := serviceAccountKubeconfig(t, c, sa)
	refusesWhatIsNotGranted(t, c, kc)

	home := newHome(t)
	set := exec.Command(kilnBin, "--home", home, "secret", "set", "api-key")
	set.Stdin = strings.NewReader("s3cr3t\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("kiln secret set: %v %s", err, out)
	}
	config, err := filepath.Abs(filepath.Join(deployDir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base, admin, serverLog := serveDeployed(t, home, "--config", config,
		"--kubeconfig", kc, "--clean-ttl", "5s")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(serverLog)
			t.Logf("kiln serve's log:\n%s", b)
		}
	})

	run := postRun(t, base, admin, deployedTrainJob)
	waitFor(t, "the gang's pods, Service and Secret", func() bool {
		secrets, err := c.cs.CoreV1().Secrets(c.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kiln.dev/run=" + string(run.ID)})
		left := c.leftovers(t, run.ID)
		return err == nil && len(secrets.Items) == 1 && left["pods"] == 2 && left["services"] == 1
	})
	waitServed(t, base, admin, run.ID, apiv1.PhaseSucceeded)
	var got apiv1.Run
	apiGetJSON(t, base, admin, "/api/v1/runs/"+string(run.ID), &got)
	task := got.Status.Nodes[0].Name
	if code, body := apiGet(t, base, admin, "/api/v1/runs/"+string(run.ID)+"/tasks/"+task+"/logs"); code != http.StatusOK ||
		!strings.Contains(body, "kwok: line 1 of a container log") {
		t.Errorf("logs of %s through the pod log API: %d %s", task, code, body)
	}
	waitFor(t, "the clean policy to delete the job's objects", func() bool {
		secrets, err := c.cs.CoreV1().Secrets(c.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kiln.dev/run=" + string(run.ID)})
		return err == nil && len(secrets.Items) == 0 && len(c.leftovers(t, run.ID)) == 0
	})
	req, _ := http.NewRequest(http.MethodDelete, base+"/api/v1/runs/"+string(run.ID), nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("deleting the run: %d", resp.StatusCode)
	}
	if refused := refusals(serverLog); len(refused) > 0 {
		t.Errorf("kiln was refused by the API server as its ServiceAccount:\n%s", strings.Join(refused, "\n"))
	}
}

// applyManifests applies the ServiceAccount, Role and RoleBinding of
// deploy/kubernetes in c's namespace, dry-runs the others there, and
// returns the ServiceAccount's name.
func applyManifests(t *testing.T, c *cluster) string {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	readManifest(t, "kustomization.yaml", &k)
	var sa string
	for _, file := range k.Resources {
		u := &unstructured.Unstructured{}
		readManifest(t, file, &u.Object)
		gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
		if err != nil {
			t.Fatal(err)
		}
		gvr := gv.WithResource(strings.ToLower(u.GetKind()) + "s")
		var ri dynamic.ResourceInterface = dyn.Resource(gvr)
		if u.GetKind() != "Namespace" {
			u.SetNamespace(c.ns)
			ri = dyn.Resource(gvr).Namespace(c.ns)
		}
		opts := metav1.CreateOptions{}
		switch u.GetKind() {
		case "ServiceAccount":
			sa = u.GetName()
		case "RoleBinding":
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = c.ns // kustomize's namespace sets it
			}
			_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
		case "Role":
		default:
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = ri.Create(t.Context(), u, opts)
		if u.GetKind() == "Namespace" && apierrors.IsAlreadyExists(err) {
			err = nil // someone deployed kiln on the test cluster
		}
		if err != nil {
			t.Fatalf("%s: creating %s %s (dry run: %v): %v", file, u.GetKind(), u.GetName(), opts.DryRun != nil, err)
		}
	}
	if sa == "" {
		t.Fatal("deploy/kubernetes has no ServiceAccount")
	}
	return sa
}

func readManifest(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// serviceAccountKubeconfig writes a kubeconfig that reaches the test
// cluster as service account sa of c's namespace, with a token from the
// TokenRequest API, and names that namespace, as a pod's service
// account files do.
func serviceAccountKubeconfig(t *testing.T, c *cluster, sa string) string {
	t.Helper()
	tr, err := c.cs.CoreV1().ServiceAccounts(c.ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for service account %s: %v", sa, err)
	}
	admin, err := clientcmd.LoadFromFile(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = cluster
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["kiln"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: sa, Namespace: c.ns}
	cfg.CurrentContext = "kiln"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// refusesWhatIsNotGranted checks that the service account's kubeconfig kc
// works, and is refused what the Role does not grant: anything outside
// its namespace, and verbs kiln never uses inside it.
func refusesWhatIsNotGranted(t *testing.T, c *cluster, kc string) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := cs.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the service account may not list pods in its namespace: %v", err)
	}
	for what, call := range map[string]func() error{
		"list nodes": func() error { _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err },
		"delete its namespace": func() error {
			return cs.CoreV1().Namespaces().Delete(ctx, c.ns, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		},
		"list pods of another namespace": func() error {
			_, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			return err
		},
		"read secrets":          func() error { _, err := cs.CoreV1().Secrets(c.ns).List(ctx, metav1.ListOptions{}); return err },
		"read a secret by name": func() error { _, err := cs.CoreV1().Secrets(c.ns).Get(ctx, "any", metav1.GetOptions{}); return err },
		"update a pod": func() error {
			_, err := cs.CoreV1().Pods(c.ns).Update(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "any"}}, metav1.UpdateOptions{})
			return err
		},
		"read its Role": func() error {
			_, err := cs.RbacV1().Roles(c.ns).Get(ctx, "kiln", metav1.GetOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("the service account may %s (err %v), want Forbidden", what, err)
		}
	}
}

// serveDeployed starts kiln serve on home with args, as startServe does,
// and returns its URL, its admin token and the file of its log.
func serveDeployed(t *testing.T, home string, args ...string) (string, string, string) {
	t.Helper()
	for dir := filepath.Dir(home); dir != os.TempDir(); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(t.TempDir(), "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	serve := exec.Command(kilnBin, append([]string{"--home", home, "serve", "--addr", "127.0.0.1:0"}, args...)...)
	serve.Stderr = logf
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	lines := bufio.NewScanner(out)
	var base string
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "kiln serving on "); ok {
			base = addr
			break
		}
	}
	if base == "" {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("kiln serve never said where it listens: %s", b)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	raw, err := os.ReadFile(filepath.Join(home, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return base, strings.TrimSpace(string(raw)), logPath
}

// refusals are the lines of a server's log where the API server refused it.
func refusals(logPath string) []string {
	b, _ := os.ReadFile(logPath)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(strings.ToLower(l), "forbidden") {
			out = append(out, l)
		}
	}
	return out
}
