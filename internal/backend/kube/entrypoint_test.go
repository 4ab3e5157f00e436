package kube

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// A process without a command runs its image's entrypoint: the container
// has no command and the process's args; a process with one keeps it
// whole as the command.
func TestEntrypointProcessesKeepTheImagesEntrypoint(t *testing.T) {
	t.Parallel()
	spec := staticGang("r-entry/trainer/1", 2)
	spec.Container.Image = "xgb:1"
	spec.Processes[0].Command, spec.Processes[0].Args = nil, []string{"--job_type=Train", "--model_path=/tmp/m"}
	objs, err := build(spec, shape{Namespace: "ns1"})
	if err != nil {
		t.Fatal(err)
	}
	type cmdArgs struct{ Command, Args []string }
	var got []cmdArgs
	for _, p := range objs.Pods {
		c := p.Spec.Containers[0]
		got = append(got, cmdArgs{c.Command, c.Args})
	}
	want := []cmdArgs{{nil, []string{"--job_type=Train", "--model_path=/tmp/m"}}, {[]string{"x"}, nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("containers' command and args (-want +got):\n%s", diff)
	}
	spec.Outputs = []string{"loss"}
	_, err = build(spec, shape{Namespace: "ns1"})
	if e := (*apiv1.Error)(nil); !errors.As(err, &e) || e.Code != apiv1.CodeEntrypointWrapped {
		t.Errorf("an entrypoint with outputs to collect: %v, want %s", err, apiv1.CodeEntrypointWrapped)
	}
	spec.Outputs, spec.Store = nil, &job.ArtifactStore{Bucket: "b"}
	if _, err := build(spec, shape{Namespace: "ns1", KilnImage: "kiln:1"}); !errors.As(err, new(*apiv1.Error)) {
		t.Errorf("an entrypoint whose artifacts kiln artifact-exec moves: %v, want %s", err, apiv1.CodeEntrypointWrapped)
	}
}

// An MPI job's hostfile is where kiln puts it and where the MPI
// operator does, /etc/mpi/hostfile.
func TestMPIHostfileIsMountedWhereTheOperatorsMountIt(t *testing.T) {
	t.Parallel()
	spec := mpiGang(mpiSpec("r-mpiaa/trainer/1", 2, 1), "ns1")
	objs, err := build(spec, shape{Namespace: "ns1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range objs.Pods {
		mounts := p.Spec.Containers[0].VolumeMounts
		for _, at := range []string{KilnDir + "/" + HostfileName, MPIHostfile} {
			if !slices.ContainsFunc(mounts, func(m corev1.VolumeMount) bool {
				return m.Name == "kiln-files" && m.MountPath == at && m.SubPath == HostfileName
			}) {
				t.Errorf("pod %s does not mount the hostfile at %s: %+v", p.Name, at, mounts)
			}
		}
	}
}
