package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/job"
)

// artifactsEnded uploads the declared output artifacts of node i, which
// just ended, to the artifact repository if it succeeded, and records
// them in its status (name, path, digest, size). An artifact that cannot
// be stored is said in an event with KLN-6022; the task's own success
// stands. Uploading again after a crash is harmless: blobs are
// content-addressed.
func (res *results) artifactsEnded(ctx context.Context, r *round, i int) {
	rs, ns := r.rs, r.rs.nodes[i]
	o := rs.plan.Tasks[i].Spec.Outputs
	if res.cfg.Artifacts == nil || ns.status.Phase != apiv1.PhaseSucceeded || o == nil || len(o.Artifacts) == 0 || !rs.kinds[i].attempts {
		return
	}
	dir, ok := res.artifactDir(rs, i)
	if !ok {
		return // the backend's outputs are not on this machine (pods upload their own)
	}
	var stored []apiv1.CachedArtifact
	for _, a := range o.Artifacts {
		ca := apiv1.CachedArtifact{Name: a.Name, Path: a.Path}
		if err := artifact.Upload(ctx, res.cfg.Artifacts, &ca, filepath.Join(dir, filepath.FromSlash(a.Path))); err != nil {
			res.log.Warn("storing an output artifact", "run", rs.run.ID, "task", ns.status.Name, "artifact", a.Name, "err", err)
			r.events = append(r.events, apiv1.Event{
				Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: apiv1.PhaseSucceeded, Reason: "ArtifactNotStored", Time: r.now,
				Message: fmt.Sprintf("%s: output artifact %s (%s) could not be stored in the artifact repository: %v",
					apiv1.CodeArtifactTransfer, a.Name, a.Path, err),
			})
			continue
		}
		stored = append(stored, ca)
	}
	ns.status.Artifacts = stored
	r.nodes[i] = true
}

// artifactDir is the directory node i's artifacts are read from on this
// machine: its last attempt's outputs, or where the cache placed them.
func (res *results) artifactDir(rs *runState, i int) (string, bool) {
	if cs := rs.nodes[i].status.Cache; cs != nil && cs.Result == apiv1.CacheHit {
		return cs.OutputDir, cs.OutputDir != ""
	}
	return res.hostOutputDir(rs.producer(i))
}

// fetchArtifacts places the stored artifacts of node i's upstream tasks
// where node i reads them, for those whose files are not there (another
// machine ran them, or their directories were removed).
func (res *results) fetchArtifacts(ctx context.Context, rs *runState, i int) error {
	if res.cfg.Artifacts == nil {
		return nil
	}
	for _, up := range rs.plan.Graph.Upstream(i) {
		ns := rs.nodes[up]
		if ns.status.Phase != apiv1.PhaseSucceeded || len(ns.status.Artifacts) == 0 {
			continue
		}
		dir, ok := res.artifactDir(rs, up)
		if !ok {
			continue
		}
		for _, a := range ns.status.Artifacts {
			dst := filepath.Join(dir, filepath.FromSlash(a.Path))
			if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
				continue // here already (or unreadable: the task says so)
			}
			if err := artifact.Download(ctx, res.cfg.Artifacts, a, dst); err != nil {
				return &apiv1.Error{
					Code:    apiv1.CodeArtifactTransfer,
					Message: fmt.Sprintf("fetching artifact %s of task %s (%s) from the artifact repository: %v", a.Name, ns.status.Name, a.Digest, err),
				}
			}
		}
	}
	return nil
}

// podInput is an artifact a pod's wrapper places at Dst before its
// command starts: kiln artifact-exec's KILN_ARTIFACT_INPUTS.
type podInput struct {
	Dst      string               `json:"dst"`
	Artifact apiv1.CachedArtifact `json:"artifact"`
}

// podArtifacts makes spec's processes fetch and store node i's artifacts
// themselves (spec.Store) when the repository is a bucket and the
// backend's outputs are not on this machine: the recorded artifacts of
// its upstream tasks are placed where it reads them, its declared output
// artifacts are stored when it succeeds. The bucket's keys go in the
// processes' environment as secret variables, which a container backend
// keeps in a Secret.
func (res *results) podArtifacts(ctx context.Context, rs *runState, i int, spec *job.Spec) error {
	s3, ok := res.cfg.Artifacts.(artifact.S3Configured)
	if !ok || spec.Federated != nil || len(spec.Processes) == 0 {
		return nil
	}
	if _, here := res.hostOutputDir(spec.ID); here {
		return nil // the controller moves them itself (artifactsEnded, fetchArtifacts)
	}
	var in []podInput
	for _, up := range rs.plan.Graph.Upstream(i) {
		ns := rs.nodes[up]
		if ns.status.Phase != apiv1.PhaseSucceeded {
			continue
		}
		dir := res.cfg.Backend.OutputDir(rs.producer(up))
		for _, a := range ns.status.Artifacts {
			in = append(in, podInput{Dst: path.Join(dir, a.Path), Artifact: a})
		}
	}
	var out []apiv1.CachedArtifact
	if o := rs.plan.Tasks[i].Spec.Outputs; o != nil && rs.kinds[i].attempts {
		for _, a := range o.Artifacts {
			out = append(out, apiv1.CachedArtifact{Name: a.Name, Path: a.Path})
		}
	}
	if len(in) == 0 && len(out) == 0 {
		return nil
	}
	cfg, err := s3.S3Config(ctx)
	if err != nil {
		return err
	}
	st := &job.ArtifactStore{Endpoint: cfg.Endpoint, Bucket: cfg.Bucket, Prefix: cfg.Prefix, Region: cfg.Region, Insecure: cfg.Insecure}
	if len(in) > 0 {
		b, _ := json.Marshal(in) // plain data always encodes
		st.Inputs = string(b)
	}
	if len(out) > 0 {
		b, _ := json.Marshal(out)
		st.Outputs = string(b)
	}
	spec.Store = st
	for _, kv := range [][2]string{{"KILN_S3_ACCESS_KEY", cfg.AccessKey}, {"KILN_S3_SECRET_KEY", cfg.SecretKey}} {
		k, v := kv[0], kv[1]
		if v == "" {
			continue
		}
		for p := range spec.Processes {
			spec.Processes[p].Env = append(spec.Processes[p].Env, k+"="+v)
		}
		spec.SecretEnv = append(spec.SecretEnv, k)
	}
	return nil
}
