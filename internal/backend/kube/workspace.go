package kube

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// WorkspaceVolume is the volume a training job's initializers and trainer
// share, named as in Kubeflow Trainer's runtimes. A pod template that
// has a volume of this name (a PersistentVolumeClaim the cluster can
// bind on every node the job uses) is used as it is; otherwise kiln
// creates a claim per run, <run>-workspace, and deletes it with the run.
const WorkspaceVolume = "initializer"

// DefaultWorkspaceSize is the storage a claim kiln creates asks for.
const DefaultWorkspaceSize = "10Gi"

// workspaceClaim is the name of the claim kiln creates for run's workspace.
func workspaceClaim(run string) string { return dnsLabel(run, maxBase) + "-workspace" }

// hasVolume reports whether the pod spec has a volume called name.
func hasVolume(spec *corev1.PodSpec, name string) bool {
	for _, v := range spec.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

// mountWorkspace mounts the run's workspace at /workspace in every
// container of p built from spec, and points each of the spec's
// workspace variables at its directory there.
func mountWorkspace(p *corev1.Pod, spec *job.Spec, a attempt, containers int) {
	ws := spec.Workspace
	if ws == nil {
		return
	}
	if !hasVolume(&p.Spec, WorkspaceVolume) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: WorkspaceVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: workspaceClaim(a.ID.Run)},
		}})
	}
	for i := range containers {
		c := &p.Spec.Containers[i]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: WorkspaceVolume, MountPath: job.WorkspaceDir})
		env := c.Env[:0:0]
		for _, e := range c.Env {
			if _, ours := ws.Dirs[e.Name]; !ours {
				env = append(env, e)
			}
		}
		for _, name := range sortedKeys(ws.Dirs) {
			env = append(env, corev1.EnvVar{Name: name, Value: job.WorkspaceDir + "/" + ws.Dirs[name]})
		}
		c.Env = env
	}
}

// createWorkspace creates the run's workspace claim unless the pod
// template brings its own volume, or the claim exists.
func (b *Backend) createWorkspace(ctx context.Context, spec *job.Spec, pods []*corev1.Pod) error {
	if spec.Workspace == nil || len(pods) == 0 || pods[0].Spec.Volumes == nil {
		return nil
	}
	for _, v := range pods[0].Spec.Volumes {
		if v.Name == WorkspaceVolume && (v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != workspaceClaim(spec.ID.Run)) {
			return nil // the template's own
		}
	}
	size, err := resource.ParseQuantity(b.cfg.WorkspaceSize)
	if err != nil {
		return &apiv1.Error{Code: apiv1.CodeWorkspace, Field: "workspaceSize", Message: fmt.Sprintf("%q is not a quantity: %v", b.cfg.WorkspaceSize, err)}
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: workspaceClaim(spec.ID.Run), Namespace: b.ns,
			Labels: map[string]string{LabelManagedBy: managedBy, LabelRun: dnsLabel(spec.ID.Run, 63)},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if b.cfg.WorkspaceClass != "" {
		pvc.Spec.StorageClassName = &b.cfg.WorkspaceClass
	}
	if err := b.core.create(ctx, "persistentvolumeclaims", pvc); ignoreExists(err) != nil {
		return &apiv1.Error{Code: apiv1.CodeWorkspace, Message: fmt.Sprintf("creating the workspace claim %s: %v", pvc.Name, err)}
	}
	return nil
}

// stopEarlier deletes the pods that earlier attempts of spec's node left
// running (cleanPodPolicy None): a gang restarts whole, never beside its
// last attempt.
func (b *Backend) stopEarlier(ctx context.Context, spec *job.Spec) error {
	if spec.ID.Number <= 1 {
		return nil
	}
	sel := LabelManagedBy + "=" + managedBy + "," + LabelRun + "=" + dnsLabel(spec.ID.Run, 63) + "," + LabelNode + "=" + dnsLabel(spec.ID.Node, 63)
	var pods corev1.PodList
	if err := b.core.list(ctx, "pods", metav1.ListOptions{LabelSelector: sel}, &pods); err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		n, _ := strconv.Atoi(p.Labels[LabelAttempt])
		if n >= spec.ID.Number || terminal(p) || p.DeletionTimestamp != nil {
			continue
		}
		if err := b.core.delete(ctx, "pods", p.Name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
			return fmt.Errorf("stopping pod %s of an earlier attempt: %w", p.Name, err)
		}
	}
	return nil
}
