package kube

import (
	"path"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"kiln.dev/kiln/internal/job"
)

// BinDir is where a pod whose attempt stores its own artifacts
// (job.Spec.Store) has the kiln binary: an emptyDir an init container
// copies it to from the kiln image.
const BinDir = "/kiln/bin"

// artifactsRecord heads the stored artifacts' list in a termination
// message, as kiln artifact-exec --termination appends it.
const artifactsRecord = "!artifacts"

// storeArtifacts makes pod p's task containers run under kiln
// artifact-exec, which fetches the attempt's input artifacts from the
// bucket before the command and stores its outputs after it, appending
// what it stored to the container's termination message. The bucket's
// keys reach it only from the attempt's Secret (spec.SecretEnv).
func storeArtifacts(p *corev1.Pod, spec *job.Spec, image string) {
	st := spec.Store
	if st == nil {
		return
	}
	bin := path.Join(BinDir, "kiln")
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{
		Name: "kiln-bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	})
	mount := corev1.VolumeMount{Name: "kiln-bin", MountPath: BinDir}
	p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{
		Name: "kiln-bin", Image: image, Command: []string{"kiln", "artifact-exec", "--install", bin},
		VolumeMounts: []corev1.VolumeMount{mount},
	})
	env := []corev1.EnvVar{
		{Name: "KILN_S3_ENDPOINT", Value: st.Endpoint},
		{Name: "KILN_S3_BUCKET", Value: st.Bucket},
		{Name: "KILN_S3_PREFIX", Value: st.Prefix},
		{Name: "KILN_S3_REGION", Value: st.Region},
		{Name: "KILN_S3_INSECURE", Value: strconv.FormatBool(st.Insecure)},
		{Name: "KILN_ARTIFACT_INPUTS", Value: st.Inputs},
		{Name: "KILN_ARTIFACT_OUTPUTS", Value: st.Outputs},
	}
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		term := c.TerminationMessagePath
		if term == "" {
			term = corev1.TerminationMessagePathDefault
		}
		c.Command = append([]string{bin, "artifact-exec", "--termination", term, "--"}, c.Command...)
		c.Env = append(c.Env, env...)
		c.VolumeMounts = append(c.VolumeMounts, mount)
	}
}
