package apidoc

import (
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// metaOperations are the routes about the server itself: health, version, the caller, this document, metrics and the web UI.
func metaOperations() []Operation {
	return []Operation{
		{
			Method: "GET", Path: "/healthz", ID: "healthz", Tag: "health", Role: Public,
			Summary: "liveness", Unlimited: true,
			Description: "Liveness: ok whenever the server answers. Never rate limited; like every route, it refuses a body over the server's limit (413).",
			Answers:     []Answer{{Status: http.StatusOK, Description: "ok", Stream: "text/plain", StreamDescription: "ok"}},
			Errors:      []int{http.StatusRequestEntityTooLarge},
		},
		{
			Method: "GET", Path: "/readyz", ID: "readyz", Tag: "health", Role: Public,
			Summary: "readiness: the store answers",
			Answers: []Answer{{Status: http.StatusOK, Description: "ok, and who leads the replicas", Stream: "text/plain", StreamDescription: "ok, then a line on leadership"}},
			Errors:  []int{http.StatusServiceUnavailable},
		},
		{
			Method: "GET", Path: "/api/v1/openapi.json", ID: "getOpenAPIDocument", Tag: "meta", Role: Public,
			Summary: "this document",
			Answers: []Answer{{Status: http.StatusOK, Description: "this document", Stream: "application/json", StreamDescription: "an OpenAPI 3.0 document"}},
		},
		{
			Method: "GET", Path: "/api/v1/schemas/{name}", ID: "getSchema", Tag: "meta", Role: Public,
			Summary:     "the JSON Schema of a kind, for editors",
			Description: "The JSON Schema (draft 7) of the documents of a kind: workflow.json, trainjob.json and so on, or kiln.json, which takes a document of any kind. Editors with YAML support read it for completion and checks. 404 (KLN-4054) for a name the server has no schema of, listing those it has.",
			Params:      []Param{{Name: "name", In: "path", Type: "", Description: "the schema's file name, such as kiln.json or workflow.json"}},
			Answers:     []Answer{{Status: http.StatusOK, Description: "the schema", Stream: "application/schema+json", StreamDescription: "a JSON Schema, draft 7"}},
		},
		{
			Method: "GET", Path: "/api/v1/version", ID: "getVersion", Tag: "meta", Role: Public,
			Summary:     "which kiln serves",
			Description: "Which kiln serves: version, commit, Go version and platform (what kiln version prints).",
			Answers:     []Answer{{Status: http.StatusOK, Description: "the build", Type: apiv1.Version{}}},
		},
		{
			Method: "GET", Path: "/api/v1/whoami", ID: "whoami", Tag: "meta", Role: Public,
			Summary:     "who the request's bearer token names",
			Description: "Who the request's bearer token names, for a client to show it and offer only what its role may do; public: without a token, or with an unknown or revoked one, it answers authenticated false and an empty role.",
			Answers:     []Answer{{Status: http.StatusOK, Description: "the caller", Type: apiv1.Whoami{}}},
		},
		{
			Method: "GET", Path: "/metrics", ID: "getMetrics", Tag: "meta", Role: Viewer,
			Summary:     "Prometheus metrics",
			Description: "Prometheus metrics: kiln_runs and kiln_tasks by phase, kiln_queue_depth, kiln_reconcile_duration_seconds, kiln_admission_wait_seconds, kiln_build_info{version, commit, go_version}, kiln_http_requests_total{route, method, code} and kiln_http_request_duration_seconds{route} (route: the route's pattern, never the path); needs a viewer's token unless the server runs with --metrics-public.",
			Answers:     []Answer{{Status: http.StatusOK, Description: "the metrics", Stream: "text/plain", StreamDescription: "the Prometheus text format"}},
		},
		{
			Method: "GET", Path: "/", ID: "getUI", Tag: "ui", Role: Public,
			Summary: "the web UI", Description: "The web UI's page: static; it calls the API with the user's token.",
			Answers: []Answer{{Status: http.StatusOK, Description: "the page", Stream: "text/html", StreamDescription: "the web UI's page"}},
			Errors:  []int{http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable},
		},
		{
			Method: "GET", Path: "/ui/{file}", ID: "getUIAsset", Tag: "ui", Role: Public,
			Summary: "the web UI's scripts and styles",
			Params:  []Param{{Name: "file", In: "path", Type: "", Description: "the file's path beneath the UI's directory, such as app.js"}},
			Answers: []Answer{{Status: http.StatusOK, Description: "the file", Stream: "application/octet-stream", StreamDescription: "a script, style or image of the web UI"}},
			Errors:  []int{http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable},
		},
	}
}
