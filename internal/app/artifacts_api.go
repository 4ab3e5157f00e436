package app

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
)

// Artifacts lists the artifacts run id's tasks stored in the artifact
// repository, by task in the run's order, then by name.
func (a *App) Artifacts(ctx context.Context, id apiv1.RunID) ([]apiv1.RunArtifact, error) {
	run, err := a.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []apiv1.RunArtifact
	for _, n := range run.Status.Nodes {
		for _, ca := range n.Artifacts {
			out = append(out, apiv1.RunArtifact{Node: n.Name, CachedArtifact: ca})
		}
	}
	return out, nil
}

// Artifact writes artifact name of task node of run id to w: a file's
// bytes, or a directory's files as a tar stream. KLN-4055 when the task
// stored none of that name.
func (a *App) Artifact(ctx context.Context, id apiv1.RunID, node, name string, w io.Writer) error {
	items, err := a.Artifacts(ctx, id)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Node != node || it.Name != name {
			continue
		}
		if a.Repository == nil {
			return apiv1.Errorf(apiv1.CodeNoArtifact, "this kiln has no artifact repository configured (artifacts.s3), so it cannot read the stored artifacts")
		}
		if !artifact.IsDir(it.CachedArtifact) {
			return transferErr(a.Repository.Get(ctx, it.Digest, w), it)
		}
		return transferErr(writeTar(ctx, a.Repository, it.CachedArtifact, w), it)
	}
	return apiv1.Errorf(apiv1.CodeNoArtifact, fmt.Sprintf("task %s of run %s stored no artifact %s", node, id, name))
}

func transferErr(err error, it apiv1.RunArtifact) error {
	if err == nil {
		return nil
	}
	return apiv1.Errorf(apiv1.CodeArtifactTransfer, fmt.Sprintf("reading artifact %s of task %s from the artifact repository: %v", it.Name, it.Node, err))
}

// writeTar writes a directory artifact's files to w as a tar stream.
func writeTar(ctx context.Context, r artifact.Repository, a apiv1.CachedArtifact, w io.Writer) error {
	tw := tar.NewWriter(w)
	for _, f := range a.Files {
		h := &tar.Header{Name: f.Path, Mode: int64(f.Mode), Size: f.Size, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if err := r.Get(ctx, f.Digest, tw); err != nil {
			return err
		}
	}
	return tw.Close()
}

// CacheArtifact writes artifact name of the cache entry key names (whole,
// or a prefix of at least 8 hex digits) of project's (every project's
// when empty) to w: a file's bytes, or a directory's files as a tar
// stream. KLN-4025 for a key that names no entry, KLN-4055 for a name
// the entry does not have.
func (a *App) CacheArtifact(ctx context.Context, project, key, name string, w io.Writer) error {
	entries, err := a.Cache.List(ctx, apiv1.CacheQuery{Project: project})
	if err != nil {
		return err
	}
	full, err := matchKey(entries, project, key)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Key != full {
			continue
		}
		for _, ca := range e.Artifacts {
			if ca.Name != name {
				continue
			}
			it := apiv1.RunArtifact{Node: e.Task, CachedArtifact: ca}
			if !artifact.IsDir(ca) {
				return transferErr(a.Cache.Repository().Get(ctx, ca.Digest, w), it)
			}
			return transferErr(writeTar(ctx, a.Cache.Repository(), ca, w), it)
		}
	}
	return apiv1.Errorf(apiv1.CodeNoArtifact, fmt.Sprintf("cache entry %s holds no artifact %s", key, name))
}
