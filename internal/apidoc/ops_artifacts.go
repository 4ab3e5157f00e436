package apidoc

import (
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// artifactOperations are the routes of the artifacts runs' tasks stored
// in the artifact repository.
func artifactOperations() []Operation {
	return []Operation{
		{
			Method: "GET", Path: "/api/v1/runs/{id}/artifacts", ID: "listRunArtifacts", Tag: "runs", Role: Viewer,
			Summary:     "the artifacts a run's tasks stored",
			Description: "The output artifacts a run's tasks stored in the artifact repository (an S3 bucket, when the server has artifacts.s3 configured) as they succeeded: task, name, path, digest and size, and a directory's files. Empty when no repository is configured.",
			Params:      []Param{runID},
			Answers:     []Answer{{Status: http.StatusOK, Description: "the stored artifacts", Type: apiv1.RunArtifactList{}}},
		},
		{
			Method: "GET", Path: "/api/v1/runs/{id}/artifacts/{node}/{name}", ID: "getRunArtifact", Tag: "runs", Role: Viewer,
			Summary:     "download a stored artifact",
			Description: "The bytes of one stored artifact, checked against its digest as they are read: a file as application/octet-stream, a directory as an application/x-tar stream of its files; 404 (KLN-4055) when the task stored no such artifact.",
			Params: []Param{
				runID,
				{Name: "node", In: "path", Type: "", Description: "the task's name"},
				{Name: "name", In: "path", Type: "", Description: "the artifact's name, as the task declared it"},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the artifact's bytes", Stream: "application/octet-stream", StreamDescription: "a file's bytes, or (application/x-tar) a directory's files"}},
		},
		{
			Method: "GET", Path: "/api/v1/cache/{key}/artifacts/{name}", ID: "getCacheArtifact", Tag: "cache", Role: Viewer,
			Summary:     "download an artifact of a cached result",
			Description: "The bytes of one artifact of a cache entry, checked against its digest as they are read: a file's bytes, or a directory's files as a tar stream (the entry's artifact says which: GET /api/v1/cache); 404 KLN-4025 when the key names no entry the token may read, KLN-4055 when the entry has no such artifact.",
			Params: []Param{
				{Name: "key", In: "path", Type: "", Description: "the entry's key, whole or its first 8 or more hex digits"},
				{Name: "name", In: "path", Type: "", Description: "the artifact's name"},
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the artifact's bytes", Stream: "application/octet-stream", StreamDescription: "a file's bytes, or a directory's files as a tar stream"}},
		},
	}
}
