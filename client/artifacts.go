package client

import (
	"context"
	"io"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Artifacts lists the artifacts run id's tasks stored in the server's
// artifact repository.
func (c *Client) Artifacts(ctx context.Context, id apiv1.RunID) ([]apiv1.RunArtifact, error) {
	var out apiv1.RunArtifactList
	err := c.do(ctx, "GET", "/api/v1/runs/"+url.PathEscape(string(id))+"/artifacts", nil, &out)
	return out.Items, err
}

// Artifact copies artifact name of task node of run id to w: a file's
// bytes, or a directory as a tar stream. KLN-4055 when there is none.
func (c *Client) Artifact(ctx context.Context, id apiv1.RunID, node, name string, w io.Writer) error {
	path := "/api/v1/runs/" + url.PathEscape(string(id)) + "/artifacts/" + url.PathEscape(node) + "/" + url.PathEscape(name)
	resp, err := c.send(ctx, "GET", path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

// CacheArtifact copies artifact name of the cache entry key names, of
// project's (every project the token may read when empty), to w.
func (c *Client) CacheArtifact(ctx context.Context, project, key, name string, w io.Writer) error {
	path := "/api/v1/cache/" + url.PathEscape(key) + "/artifacts/" + url.PathEscape(name) + "?project=" + url.QueryEscape(project)
	resp, err := c.send(ctx, "GET", path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}
