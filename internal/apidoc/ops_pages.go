package apidoc

import (
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// What every GET a page polls takes and may answer: an ETag, a 304 for a
// request that has it already, a gzipped body for one that accepts it.
var (
	ifNoneMatch = Param{
		Name: "If-None-Match", In: "header", Type: "",
		Description: "the ETag of an earlier answer (weak, W/\"…\"): the server answers 304 with no body if the answer would be the same. Every such answer carries its ETag and Cache-Control: no-cache, and is gzipped for a client whose Accept-Encoding takes gzip",
	}
	notModified = Answer{Status: http.StatusNotModified, Description: "the answer is the one whose ETag If-None-Match names"}
)

// pageOperations are the routes that read a large run a page at a time.
func pageOperations() []Operation {
	return []Operation{
		{
			Method: "GET", Path: "/api/v1/runs/{id}/nodes", ID: "listRunNodes", Tag: "runs", Role: Viewer,
			Summary: "a page of a run's nodes",
			Description: "A page of a run's nodes (tasks, and the items of maps, dynamic tasks and subworkflows), in the run's order, as Kubernetes lists a kind: limit and continue page them; phase and parent filter them; " +
				"sinceVersion keeps those that changed since the resourceVersion of an earlier answer, so that a live view fetches only what changed. " +
				"Every page of one listing has the resourceVersion of its first: send it as sinceVersion next. " +
				"Versions are kept in the store, the same across restarts and replicas. A sinceVersion that is not a version of the run (not a number, or past its own) is 410 KLN-4075: list again without it. A continue token not given for this run and query is 400 KLN-4076.",
			Params: []Param{
				runID,
				{Name: "phase", In: "query", Type: "", Description: "node phases in any case, comma separated (running,failed); an unknown one is 400 KLN-4050"},
				{Name: "parent", In: "query", Type: "", Description: "the children of this group node (a map's items); present but empty: the nodes at the top of the run"},
				{Name: "sinceVersion", In: "query", Type: "", Description: "the resourceVersion of an earlier answer: only the nodes that changed since, new ones included"},
				{Name: "limit", In: "query", Type: 0, Default: apiv1.DefaultNodePage, Maximum: bound(apiv1.MaxNodePage)},
				{Name: "continue", In: "query", Type: "", Description: "the continue of the previous page, with the same phase, parent and sinceVersion"},
				ifNoneMatch,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "a page of nodes, the counts of the nodes by phase, and the resourceVersion", Type: apiv1.NodeList{}}, notModified},
			Errors:  []int{http.StatusGone},
		},
	}
}
