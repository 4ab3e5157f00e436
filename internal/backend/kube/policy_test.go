package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// failRankOne launches a gang of three whose rank 1 fails (as a kubelet would
// report it) while the others run, and waits for the decision.
func failRankOne(t *testing.T, h *harness, spec *job.Spec) {
	t.Helper()
	ctx := context.Background()
	for i := range 3 {
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Host: i, Command: []string{"x"}})
	}
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	eventually(t, "the gang's pods to run", func() bool {
		pods = h.pods(t, spec.ID)
		return len(pods) == 3 && pods[0].Status.Phase == corev1.PodRunning && pods[1].Status.Phase == corev1.PodRunning && pods[2].Status.Phase == corev1.PodRunning
	})
	p := pods[1]
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 3, Reason: "Error", FinishedAt: metav1.Now(),
	}}
	if _, err := h.c.Client.CoreV1().Pods(h.ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := h.wait(t, spec.ID); st.ExitCode != 3 || st.Failed != "node-1" {
		t.Fatalf("got exit %d from %q, want 3 from node-1", st.ExitCode, st.Failed)
	}
	if err := h.Release(ctx, spec.ID, false); err != nil {
		t.Fatal(err)
	}
}

// TestCleanPodPolicyPerJob: when a gang fails, None deletes no pod,
// Running (the default) the pods still running, All every pod once the
// end is recorded. A restart of a None gang stops what it left running.
func TestCleanPodPolicyPerJob(t *testing.T) {
	for _, c := range []struct {
		clean job.Clean
		left  []string // pod name suffixes left
	}{{job.CleanNone, []string{"-0", "-1", "-2"}}, {job.CleanRunning, []string{"-1"}}, {job.CleanAll, nil}} {
		name := string(c.clean)
		if name == "" {
			name = "Running"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Config{})
			spec := withAnnotations(&job.Spec{ID: mustID("r-ppppp/train/1"), Clean: c.clean}, nil)
			failRankOne(t, h, spec)
			var want []string
			for _, s := range c.left {
				want = append(want, names(spec.ID).Base+s)
			}
			eventually(t, fmt.Sprintf("pods %v to be left", want), func() bool {
				var got []string
				for _, p := range h.pods(t, spec.ID) {
					if p.DeletionTimestamp == nil {
						got = append(got, p.Name)
					}
				}
				slices.Sort(got)
				return slices.Equal(got, want)
			})
			if c.clean != job.CleanNone {
				return
			}
			next := withAnnotations(&job.Spec{ID: mustID("r-ppppp/train/2"), Clean: c.clean}, nil)
			next.Processes = spec.Processes
			if err := h.Launch(context.Background(), next); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the restart to stop the running pods its last attempt left", func() bool {
				live := 0
				for _, p := range h.pods(t, spec.ID) {
					if p.DeletionTimestamp == nil {
						live++
					}
				}
				return live == 1 // the failed rank, kept for its logs
			})
		})
	}
}

// TestWorkspaceIsSharedByInitializerAndTrainer: both mount the run's
// claim at /workspace and read their directories there, whatever the
// local paths in their environment; a template's own initializer
// volume is used instead of a claim of kiln's; the claim goes with the run.
func TestWorkspaceIsSharedByInitializerAndTrainer(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := context.Background()
	init := withAnnotations(&job.Spec{
		ID:        mustID("r-wwwww/dataset-initializer/1"),
		Processes: []job.Process{{Command: []string{"kiln", "initialize", "dataset", "http://h/d"}, Env: []string{"KILN_INITIALIZER_DIR=/home/u/out/dataset"}}},
		Workspace: &job.Workspace{Dirs: map[string]string{"KILN_INITIALIZER_DIR": "dataset"}},
	}, nil)
	trainer := withAnnotations(&job.Spec{
		ID:        mustID("r-wwwww/trainer/1"),
		Workspace: &job.Workspace{Dirs: map[string]string{"KILN_DATASET_DIR": "dataset", "KILN_MODEL_DIR": "model"}},
	}, nil)
	for i := range 2 {
		trainer.Processes = append(trainer.Processes, job.Process{
			Name: fmt.Sprintf("node-%d", i), Host: i, Command: []string{"x"}, Group: "node",
			Env: []string{"KILN_DATASET_DIR=/home/u/out/dataset", "KILN_MODEL_DIR=/home/u/out/model", "OTHER=1"},
		})
	}
	for _, s := range []*job.Spec{init, trainer} {
		if err := h.Launch(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	pvc, err := h.c.Client.CoreV1().PersistentVolumeClaims(h.ns).Get(ctx, "r-wwwww-workspace", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kiln made no workspace claim: %v", err)
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) || pvc.Spec.Resources.Requests.Storage().String() != DefaultWorkspaceSize {
		t.Errorf("claim %+v, want ReadWriteMany of %s", pvc.Spec, DefaultWorkspaceSize)
	}
	want := map[string]map[string]string{
		"r-wwwww-dataset-initializer-1": {"KILN_INITIALIZER_DIR": "/workspace/dataset"},
		"r-wwwww-trainer-1-0":           {"KILN_DATASET_DIR": "/workspace/dataset", "KILN_MODEL_DIR": "/workspace/model", "OTHER": "1"},
		"r-wwwww-trainer-1-1":           {"KILN_DATASET_DIR": "/workspace/dataset", "KILN_MODEL_DIR": "/workspace/model", "OTHER": "1"},
	}
	for _, id := range []job.AttemptID{init.ID, trainer.ID} {
		for _, p := range h.pods(t, id) {
			checkWorkspacePod(t, &p, "r-wwwww-workspace", want[p.Name])
		}
	}

	own := withAnnotations(&job.Spec{ID: mustID("r-vvvvv/trainer/1"), Processes: trainer.Processes, Workspace: trainer.Workspace}, nil)
	b, _ := json.Marshal(apiv1.PodTemplate{Spec: &corev1.PodSpec{Volumes: []corev1.Volume{{
		Name: WorkspaceVolume, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}},
	}}}})
	own.Container.PodTemplate = b
	if err := h.Launch(ctx, own); err != nil {
		t.Fatal(err)
	}
	for _, p := range h.pods(t, own.ID) {
		checkWorkspacePod(t, &p, "shared", nil)
	}
	if _, err := h.c.Client.CoreV1().PersistentVolumeClaims(h.ns).Get(ctx, "r-vvvvv-workspace", metav1.GetOptions{}); err == nil {
		t.Error("kiln made a claim although the pod template brings its own initializer volume")
	}

	for _, id := range []string{"r-wwwww/dataset-initializer/1", "r-wwwww/trainer/1"} { // a run is removed once it ended
		if err := h.Abort(ctx, mustID(id), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.RemoveRun(ctx, "r-wwwww"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the run's claim to be deleted", func() bool {
		c, err := h.c.Client.CoreV1().PersistentVolumeClaims(h.ns).Get(ctx, "r-wwwww-workspace", metav1.GetOptions{})
		return err != nil || c.DeletionTimestamp != nil
	})
}

// checkWorkspacePod checks that every container of p mounts the claim at
// /workspace, once, and has the variables of env (when given) exactly once.
func checkWorkspacePod(t *testing.T, p *corev1.Pod, claim string, env map[string]string) {
	t.Helper()
	vols := 0
	for _, v := range p.Spec.Volumes {
		if v.Name == WorkspaceVolume {
			vols++
			if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim {
				t.Errorf("pod %s: volume %s is %+v, want claim %s", p.Name, v.Name, v.VolumeSource, claim)
			}
		}
	}
	if vols != 1 {
		t.Errorf("pod %s has %d %s volumes, want 1", p.Name, vols, WorkspaceVolume)
	}
	for _, c := range p.Spec.Containers {
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == WorkspaceVolume && m.MountPath == job.WorkspaceDir
		}) {
			t.Errorf("pod %s container %s does not mount the workspace at %s: %+v", p.Name, c.Name, job.WorkspaceDir, c.VolumeMounts)
		}
		got := map[string][]string{}
		for _, e := range c.Env {
			got[e.Name] = append(got[e.Name], e.Value)
		}
		for k, v := range env {
			if !slices.Equal(got[k], []string{v}) {
				t.Errorf("pod %s container %s: %s = %q, want only %q", p.Name, c.Name, k, got[k], v)
			}
		}
	}
}
