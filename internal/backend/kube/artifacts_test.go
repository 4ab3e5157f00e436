package kube

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/artifact/artifacttest"
	"kiln.dev/kiln/internal/job"
)

// A pod whose attempt stores its own artifacts gets kiln from an init
// container, runs its task under kiln artifact-exec with the bucket's
// keys from the attempt's Secret only; that pod's wrapper, run here as a
// real process with the pod's own command and environment against the
// test S3 server, fetches the input, stores the output, and its record
// is read back by the status code.
func TestPodsStoreTheirArtifacts(t *testing.T) {
	s3 := artifacttest.S3Config(t)
	repo, err := artifact.NewS3(s3)
	if err != nil {
		t.Fatal(err)
	}
	// The upstream task's artifact, already in the bucket.
	src := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(src, []byte("from upstream"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := apiv1.CachedArtifact{Name: "x", Path: "x.txt"}
	if err := artifact.Upload(t.Context(), repo, &in, src); err != nil {
		t.Fatal(err)
	}
	inputs, _ := json.Marshal([]map[string]any{{"dst": OutputsDir + "/up/x.txt", "artifact": in}})
	outputs, _ := json.Marshal([]apiv1.CachedArtifact{{Name: "model", Path: "model.bin"}})

	h := newHarness(t, Config{KilnImage: "registry.example/kiln:test"})
	spec := withAnnotations(&job.Spec{
		ID: mustID("r-store/make/1"),
		Processes: []job.Process{{
			Command: []string{
				"sh", "-c",
				`cat "$KILN_OUTPUTS/up/x.txt" > "$KILN_OUTPUTS/seen"; printf %s "${KILN_S3_SECRET_KEY:-unset}" > "$KILN_OUTPUTS/key"; printf weights > "$KILN_OUTPUTS/model.bin"`,
			},
			Env: []string{"A=1", "KILN_S3_ACCESS_KEY=" + s3.AccessKey, "KILN_S3_SECRET_KEY=" + s3.SecretKey},
		}},
		SecretEnv: []string{"KILN_S3_ACCESS_KEY", "KILN_S3_SECRET_KEY"},
		Outputs:   []string{"seen", "key"}, Artifacts: []string{"model.bin"},
		Store: &job.ArtifactStore{
			Endpoint: s3.Endpoint, Bucket: s3.Bucket, Prefix: s3.Prefix, Region: s3.Region,
			Inputs: string(inputs), Outputs: string(outputs),
		},
	}, nil)
	if err := h.Launch(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	pods := h.pods(t, spec.ID)
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	p := pods[0]
	raw, _ := json.Marshal(p)
	if strings.Contains(string(raw), s3.SecretKey) || strings.Contains(string(raw), s3.AccessKey) {
		t.Fatal("the bucket's keys are in the pod object")
	}
	if len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Image != "registry.example/kiln:test" ||
		!slices.Equal(p.Spec.InitContainers[0].Command, []string{"kiln", "artifact-exec", "--install", BinDir + "/kiln"}) {
		t.Fatalf("init containers %+v, want one copying kiln from the kiln image", p.Spec.InitContainers)
	}
	if !slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "kiln-bin" && v.EmptyDir != nil }) {
		t.Error("no kiln-bin emptyDir")
	}
	c := p.Spec.Containers[0]
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "kiln-bin" && m.MountPath == BinDir }) {
		t.Error("the task container does not mount kiln-bin")
	}
	if want := []string{BinDir + "/kiln", "artifact-exec", "--termination", corev1.TerminationMessagePathDefault, "--", "/bin/sh"}; !slices.Equal(c.Command[:len(want)], want) {
		t.Fatalf("command %q, want it to start %q", c.Command, want)
	}
	sec, err := h.c.Client.CoreV1().Secrets(h.ns).Get(t.Context(), secretName(spec), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The pod's container, run here: its env with the Secret's values
	// resolved, and the pod's mounts (outputs, termination message, kiln)
	// mapped to this machine's paths.
	dir, bin := t.TempDir(), buildKiln(t)
	term := filepath.Join(t.TempDir(), "termination-log")
	mapPath := func(s string) string {
		s = strings.ReplaceAll(s, corev1.TerminationMessagePathDefault, term)
		s = strings.ReplaceAll(s, BinDir+"/kiln", bin)
		return strings.ReplaceAll(s, OutputsDir, dir)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != sec.Name {
				t.Fatalf("%s comes from Secret %s, want %s", e.Name, ref.Name, sec.Name)
			}
			env = append(env, e.Name+"="+string(sec.Data[ref.Key]))
		case e.ValueFrom != nil:
			t.Fatalf("env %s from %+v", e.Name, e.ValueFrom)
		default:
			env = append(env, e.Name+"="+mapPath(e.Value))
		}
	}
	argv := make([]string, len(c.Command))
	for i, a := range c.Command {
		argv[i] = mapPath(a)
	}
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the pod's command: %v\n%s", err, out)
	}
	msg, err := os.ReadFile(term)
	if err != nil {
		t.Fatal(err)
	}
	outs, stored, err := parseTermination(string(msg), spec.Outputs)
	if err != nil {
		t.Fatalf("termination message %q: %v", msg, err)
	}
	if outs["seen"] != "from upstream" {
		t.Errorf("the task read %q from its input artifact, want %q", outs["seen"], "from upstream")
	}
	if outs["key"] != "unset" {
		t.Error("the task itself saw the bucket's secret key")
	}
	var got []apiv1.CachedArtifact
	if err := json.Unmarshal([]byte(stored), &got); err != nil || len(got) != 1 {
		t.Fatalf("stored artifacts %q (%v), want one", stored, err)
	}
	want := apiv1.CachedArtifact{Name: "model", Path: "model.bin"}
	if err := artifact.Upload(t.Context(), artifact.NewDir(t.TempDir()), &want, filepath.Join(dir, "model.bin")); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("stored %+v, want %+v", got[0], want)
	}
	if _, err := repo.Stat(t.Context(), got[0].Digest); err != nil {
		t.Errorf("the stored artifact is not in the bucket: %v", err)
	}
	// The status code reads the same message into the attempt's status.
	st := succeeded(job.Status{Processes: map[string]int{}}, spec, []procState{{terminated: &corev1.ContainerStateTerminated{Message: string(msg)}}})
	if st.OutputError != "" || st.Artifacts != stored {
		t.Errorf("status %+v, want the stored artifacts %s", st, stored)
	}
}

// buildKiln builds the kiln binary the pods' init container would copy.
func buildKiln(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	bin := filepath.Join(t.TempDir(), "kiln")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/kiln")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building kiln: %v\n%s", err, out)
	}
	return bin
}

func TestParseTermination(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		msg, stored string
		outs        map[string]string
		err         string
	}{
		"parameters then artifacts": {msg: "a 2\nhi!artifacts 4\n[{}]", outs: map[string]string{"a": "hi"}, stored: "[{}]"},
		"artifacts only":            {msg: "!artifacts 2\n[]", outs: map[string]string{}, stored: "[]"},
		"nothing":                   {msg: "", outs: map[string]string{}},
		"a cut artifacts record":    {msg: "!artifacts 90\n[{", err: "at most 4096 bytes"},
		"a missing artifact first":  {msg: "!missing 1\nm!artifacts 2\n[]", err: `"m" was not written`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			outs, stored, err := parseTermination(tc.msg, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || stored != tc.stored || len(outs) != len(tc.outs) || outs["a"] != tc.outs["a"] {
				t.Errorf("= %q, %q, %v; want %q, %q", outs, stored, err, tc.outs, tc.stored)
			}
		})
	}
}

// An attempt with artifacts to move and no kiln image is refused, coded.
func TestStoreWithoutKilnImageIsRefused(t *testing.T) {
	t.Parallel()
	spec := &job.Spec{
		ID: mustID("r-noimg/make/1"), Processes: []job.Process{{Command: []string{"true"}}},
		Store: &job.ArtifactStore{Endpoint: "http://s3:9000", Bucket: "b"},
	}
	_, err := build(spec, shape{})
	var coded *apiv1.Error
	if !errors.As(err, &coded) || coded.Code != apiv1.CodeArtifactConfig || coded.Field != "kubernetes.kilnImage" {
		t.Fatalf("build = %v, want %s naming kubernetes.kilnImage", err, apiv1.CodeArtifactConfig)
	}
	if _, err := build(spec, shape{KilnImage: "kiln:1"}); err != nil {
		t.Fatal(err)
	}
}
