package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	trainerv1 "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestKubeflowTrainerExamplesRunUnchanged runs the TrainJobs of
// examples/kubeflow, written as Kubeflow Trainer's user guides write them
// (torch, mpi, xgboost, jax), for real, and reads their status back in
// Trainer's shape.
func TestKubeflowTrainerExamplesRunUnchanged(t *testing.T) {
	env := frameworkEnv(t)
	cases := []struct {
		file, job string
		lines     map[string]int // substring of the logs -> how many lines hold it
		ignored   string         // a field the local backend says it ignores
	}{
		{"torch.yaml", "pytorch-ddp", map[string]int{"identical_weights=True": 4}, "spec.trainer.image"},
		{"mpi.yaml", "mpi-allreduce", map[string]int{"allreduce = 10": 4}, "TrainingRuntime/mpi-allreduce spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image"},
		{"xgboost.yaml", "xgboost-distributed", map[string]int{"model spread across ranks 0.00e+00": 2}, "spec.trainer.image"},
		{"jax.yaml", "jax-distributed", map[string]int{"jax process 2 of 3 coordinator 127.0.0.1:": 1, " of 3 coordinator ": 3}, "spec.trainer.image"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			home := newHome(t)
			r := kilnWithEnv(t, env, home, "run", filepath.Join(repoRoot(), "examples", "kubeflow", tc.file))
			if r.code != 0 {
				t.Fatalf("kiln run %s exited %d\n%s%s", tc.file, r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tc.ignored+" is ignored on the local backend") {
				t.Errorf("kiln run does not say the local backend ignores %s:\n%s", tc.ignored, r.stdout)
			}
			id := runs(t, home)[0].ID
			logs := kilnWithEnv(t, env, home, "logs", string(id)).stdout
			for want, n := range tc.lines {
				if got := strings.Count(logs, want); got != n {
					t.Errorf("%d log lines hold %q, want %d\n%s", got, want, n, logs)
				}
			}
			list := kilnWithEnv(t, env, home, "get", "trainjobs").stdout
			if !strings.Contains(list, tc.job) || !strings.Contains(list, "Complete") {
				t.Errorf("kiln get trainjobs does not list %s as Complete:\n%s", tc.job, list)
			}
			g := kilnWithEnv(t, env, home, "get", "trainjob", tc.job, "-o", "json")
			var view trainerv1.TrainJobView
			if err := json.Unmarshal([]byte(g.stdout), &view); err != nil {
				t.Fatalf("kiln get trainjob: %v\n%s%s", err, g.stdout, g.stderr)
			}
			if view.APIVersion != trainerv1.APIVersion || view.Metadata.Annotations[trainerv1.RunAnnotation] != string(id) {
				t.Errorf("view %+v does not name its group and run %s", view, id)
			}
			if !holds(view.Status.Conditions, apiv1.ConditionComplete) || len(view.Status.JobsStatus) == 0 || view.Status.JobsStatus[0].Succeeded != 1 {
				t.Errorf("status %+v, want Complete and a succeeded job", view.Status)
			}
		})
	}
}

func holds(conds []apiv1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ && c.Status == "True" {
			return true
		}
	}
	return false
}

// TestKubeKubeflowTrainerExamplesGetTheirFrameworksEnv submits the
// Trainer-shaped MPI, XGBoost and JAX examples to the test cluster and
// checks each pod carries its framework's rendezvous environment (the
// pods run on fake nodes: what they run is not observed).
func TestKubeKubeflowTrainerExamplesGetTheirFrameworksEnv(t *testing.T) {
	c := newCluster(t)
	cases := []struct {
		file string
		pods int
		env  []string
	}{
		{"mpi.yaml", 2, []string{"OMPI_MCA_orte_default_hostfile"}}, // the launcher and a worker
		{"xgboost.yaml", 2, []string{"DMLC_TRACKER_URI", "DMLC_TASK_ID", "DMLC_NUM_WORKER"}},
		{"jax.yaml", 3, []string{"JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			home := c.home(t)
			cmd := startKiln(t, home, "run", filepath.Join(repoRoot(), "examples", "kubeflow", tc.file))
			id := newestRun(t, home)
			waitPods(t, c, id, tc.pods)
			for _, p := range c.pods(t, id) {
				have := map[string]bool{}
				for _, e := range p.Spec.Containers[0].Env {
					have[e.Name] = true
				}
				for _, name := range tc.env {
					if !have[name] {
						t.Errorf("pod %s lacks %s: %v", p.Name, name, p.Spec.Containers[0].Env)
					}
				}
				if p.Spec.Containers[0].Image == "" {
					t.Errorf("pod %s has no image", p.Name)
				}
			}
			if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
				t.Fatalf("cancel: %s", r.stderr)
			}
			_ = cmd.Wait()
			waitCancelled(t, home, id)
		})
	}
}

// TestWebUIShowsTheFieldsABackendIgnores submits a Trainer TrainJob with
// an image to a local server: the run's page lists the image as ignored,
// as the run's events record it.
func TestWebUIShowsTheFieldsABackendIgnores(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: ignored}
spec:
  runtimeRef: {name: plain}
  trainer: {image: "busybox:1.36", command: ["true"]}
`)
	var text string
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)),
		chromedp.WaitVisible(`#warnings`),
		chromedp.Text("#warnings", &text),
	)
	if err != nil {
		t.Fatalf("driving the UI: %v", err)
	}
	if want := "spec.trainer.image is ignored on the local backend"; !strings.Contains(text, want) {
		t.Errorf("the run's page shows %q, want %q", text, want)
	}
}
