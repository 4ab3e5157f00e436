package apidoc

import (
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// resourceOperations are the routes of what is stored beside runs: runtimes, templates, schedules, quotas, secrets and the cache.
func resourceOperations() []Operation {
	return []Operation{
		{
			Method: "GET", Path: "/api/v1/runtimes", ID: "listRuntimes", Tag: "runtimes", Role: Viewer,
			Summary:     "the training runtimes a project's jobs may name",
			Description: "The training runtimes a project's jobs may name: the built-in ones, the stored ClusterTrainingRuntimes and the project's TrainingRuntimes, by name and then in lookup order; status.source is builtin, stored, or overridden for one that a job naming it does not get.",
			Params: []Param{
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the runtimes", Type: apiv1.RuntimeList{}}},
		},
		{
			Method: "GET", Path: "/api/v1/runtimes/{name}", ID: "getRuntime", Tag: "runtimes", Role: Viewer,
			Summary:     "one runtime",
			Description: "One runtime: of kind, else the first in lookup order (the project's TrainingRuntime, a stored ClusterTrainingRuntime, a built-in one); version picks an older version of a stored one.",
			Params: []Param{
				pathName,
				projectParam,
				{Name: "kind", In: "query", Type: "", Enum: []string{"TrainingRuntime", "ClusterTrainingRuntime"}},
				{Name: "version", In: "query", Type: 0},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the runtime", Type: apiv1.TrainingRuntime{}}},
		},
		{
			Method: "DELETE", Path: "/api/v1/runtimes/{name}", ID: "deleteRuntime", Tag: "runtimes", Role: Editor,
			Summary:     "remove a stored runtime",
			Description: "Remove a stored runtime (kind: default TrainingRuntime; a ClusterTrainingRuntime needs a token of every project); runs that used it keep what they resolved. 404 (KLN-4028) when none is stored, 409 (KLN-4029) for a built-in one.",
			Params: []Param{
				pathName,
				projectParam,
				{Name: "kind", In: "query", Type: "", Enum: []string{"TrainingRuntime", "ClusterTrainingRuntime"}},
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "removed"}},
			Errors:  []int{http.StatusConflict},
		},
		{
			Method: "POST", Path: "/api/v1/apply", ID: "apply", Tag: "resources", Role: Editor,
			Summary:     "store templates, schedules, runtimes and quotas",
			Description: "Kiln apply: check the WorkflowTemplates, Schedules, TrainingRuntimes and ClusterTrainingRuntimes of the files and store each, templates, Schedules and TrainingRuntimes in the project (a Schedule that exists keeps its status), ClusterTrainingRuntimes for every project (which needs a token of every project); nothing is stored unless all are valid. A runtime applied unchanged keeps its version. Files come as a submission's do.",
			Params: []Param{
				projectParam,
				{Name: "file", In: "query", Type: "", Description: "the name errors give a plain body (default request)"},
			},
			Body:    filesBody(storedDocument, "WorkflowTemplates, Schedules, training runtimes and ProjectQuotas"),
			Answers: []Answer{{Status: http.StatusOK, Description: "what was stored", Type: apiv1.ApplyResult{}}},
			Errors:  []int{http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable},
		},
		{
			Method: "POST", Path: "/api/v1/templates", ID: "applyTemplates", Tag: "templates", Role: Editor,
			Summary:     "store WorkflowTemplates",
			Description: "Kiln apply: check the WorkflowTemplates of the files and store each in the project, creating or replacing it; nothing is stored unless all are valid. Files come as a submission's do: multipart/form-data with one file part per file, or one YAML or JSON body.",
			Params: []Param{
				projectParam,
				{Name: "file", In: "query", Type: "", Description: "the name errors give a plain body (default request)"},
			},
			Body:    filesBody("WorkflowTemplateDocument", "WorkflowTemplates"),
			Answers: []Answer{{Status: http.StatusOK, Description: "the stored templates", Type: apiv1.TemplateList{}}},
			Errors:  []int{http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable},
		},
		{
			Method: "GET", Path: "/api/v1/templates", ID: "listTemplates", Tag: "templates", Role: Viewer,
			Summary: "a project's stored WorkflowTemplates, by name",
			Params: []Param{
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the templates", Type: apiv1.TemplateList{}}},
		},
		{
			Method: "GET", Path: "/api/v1/templates/{name}", ID: "getTemplate", Tag: "templates", Role: Viewer,
			Summary:     "one stored WorkflowTemplate",
			Description: "One stored WorkflowTemplate (KLN-4015 if the project has none of that name).",
			Params: []Param{
				pathName,
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the template", Type: apiv1.WorkflowTemplate{}}},
		},
		{
			Method: "PUT", Path: "/api/v1/templates/{name}", ID: "putTemplate", Tag: "templates", Role: Editor,
			Summary:     "store the one WorkflowTemplate of the body",
			Description: "Store the one WorkflowTemplate of the body (YAML or JSON) under this name, which must be its metadata.name.",
			Params: []Param{
				pathName,
				projectParam,
				{Name: "file", In: "query", Type: "", Description: "the name errors give the body (default request)"},
			},
			Body:    filesBody("WorkflowTemplateDocument", "the one WorkflowTemplate"),
			Answers: []Answer{{Status: http.StatusCreated, Description: "stored, new", Type: apiv1.WorkflowTemplate{}}, {Status: http.StatusOK, Description: "stored, replacing one", Type: apiv1.WorkflowTemplate{}}},
			Errors:  []int{http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable},
		},
		{
			Method: "DELETE", Path: "/api/v1/templates/{name}", ID: "deleteTemplate", Tag: "templates", Role: Editor,
			Summary:     "remove a stored WorkflowTemplate",
			Description: "Remove a stored WorkflowTemplate; runs that use it keep the copy they were submitted with.",
			Params: []Param{
				pathName,
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "removed"}},
		},
		{
			Method: "GET", Path: "/api/v1/schedules", ID: "listSchedules", Tag: "schedules", Role: Viewer,
			Summary:     "a project's Schedules",
			Description: "A project's Schedules (stored with POST /api/v1/apply), by name, each with its unfinished runs and next tick.",
			Params: []Param{
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the Schedules", Type: apiv1.ScheduleList{}}},
			Errors:  []int{http.StatusNotFound},
		},
		{
			Method: "GET", Path: "/api/v1/schedules/{name}", ID: "getSchedule", Tag: "schedules", Role: Viewer,
			Summary:     "one Schedule with its unfinished runs and next tick",
			Description: "One Schedule with its unfinished runs and next tick (KLN-3094 if the project has none of that name).",
			Params: []Param{
				pathName,
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the Schedule", Type: apiv1.Schedule{}}},
		},
		{
			Method: "DELETE", Path: "/api/v1/schedules/{name}", ID: "deleteSchedule", Tag: "schedules", Role: Editor,
			Summary: "remove a Schedule", Description: "Remove a Schedule; the runs it started stay.",
			Params: []Param{
				pathName,
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "removed"}},
		},
		{
			Method: "POST", Path: "/api/v1/schedules/{name}/suspend", ID: "suspendSchedule", Tag: "schedules", Role: Editor,
			Summary:     "stop a Schedule from starting runs",
			Description: "Stop a Schedule from starting runs (spec.suspend true); its spec and status are kept.",
			Params: []Param{
				pathName,
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the Schedule", Type: apiv1.Schedule{}}},
		},
		{
			Method: "POST", Path: "/api/v1/schedules/{name}/unsuspend", ID: "unsuspendSchedule", Tag: "schedules", Role: Editor,
			Summary:     "let a suspended Schedule start runs again",
			Description: "Let a suspended Schedule start runs again (spec.suspend false); ticks while it was suspended follow startingDeadlineSeconds.",
			Params: []Param{
				pathName,
				projectParam,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the Schedule", Type: apiv1.Schedule{}}},
		},
		{
			Method: "GET", Path: "/api/v1/quotas", ID: "listQuotas", Tag: "quotas", Role: Viewer,
			Summary:     "the projects' quotas",
			Description: "The projects' quotas (ProjectQuota, stored with POST /api/v1/apply by a token of every project), of the projects the token may see.",
			Answers:     []Answer{{Status: http.StatusOK, Description: "the quotas", Type: apiv1.QuotaList{}}},
		},
		{
			Method: "DELETE", Path: "/api/v1/quotas/{name}", ID: "deleteQuota", Tag: "quotas", Role: Editor,
			Summary:     "remove a project's quota",
			Description: "Remove a project's quota (needs a token of every project); the engine drops it within its refresh period (2 s).",
			Params: []Param{
				{Name: "name", In: "path", Type: "", Description: "the project"},
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "removed"}},
		},
		{
			Method: "GET", Path: "/api/v1/secrets", ID: "listSecrets", Tag: "secrets", Role: Viewer,
			Summary: "a project's secret names (never values)",
			Params: []Param{
				{Name: "project", In: "query", Type: ""},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the names", Type: apiv1.SecretList{}}},
		},
		{
			Method: "PUT", Path: "/api/v1/secrets/{name}", ID: "putSecret", Tag: "secrets", Role: Editor,
			Summary: "set a secret", Description: "Set a secret; the body is its value.",
			Params: []Param{
				pathName,
				{Name: "project", In: "query", Type: ""},
			},
			Body:    secretBody,
			Answers: []Answer{{Status: http.StatusNoContent, Description: "set"}},
			Errors:  []int{http.StatusRequestTimeout, http.StatusRequestEntityTooLarge},
		},
		{
			Method: "DELETE", Path: "/api/v1/secrets/{name}", ID: "deleteSecret", Tag: "secrets", Role: Editor,
			Summary: "remove a secret",
			Params: []Param{
				pathName,
				{Name: "project", In: "query", Type: ""},
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "removed"}},
		},
		{
			Method: "GET", Path: "/api/v1/cache", ID: "listCacheEntries", Tag: "cache", Role: Viewer,
			Summary:     "stored results of cached tasks",
			Description: "Stored results of cached tasks, most recently used first; without project, those of every project the token may read.",
			Params: []Param{
				{Name: "project", In: "query", Type: ""},
				{Name: "workflow", In: "query", Type: ""},
				{Name: "task", In: "query", Type: ""},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the entries", Type: apiv1.CacheEntryList{}}},
		},
		{
			Method: "DELETE", Path: "/api/v1/cache/{key}", ID: "deleteCacheEntry", Tag: "cache", Role: Editor,
			Summary:     "remove a stored result and the bytes no other entry needs",
			Description: "Remove a stored result and the bytes no other entry needs; the key is whole (sha256:<hex>) or a prefix of at least 8 hex digits. 404 (KLN-4025) if no entry the token may touch has it, 400 (KLN-1012) if it names several.",
			Params: []Param{
				{Name: "key", In: "path", Type: ""},
				{Name: "project", In: "query", Type: "", Description: "look only among this project's entries"},
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "what was removed", Type: apiv1.CachePruned{}}},
		},
		{
			Method: "POST", Path: "/api/v1/cache/prune", ID: "pruneCache", Tag: "cache", Role: Editor,
			Summary:     "remove the stored results the body selects",
			Description: "Remove the stored results the body selects, and every expired one, and the bytes no entry needs.",
			Body:        &Body{Type: apiv1.CachePrune{}},
			Answers:     []Answer{{Status: http.StatusOK, Description: "what was removed", Type: apiv1.CachePruned{}}},
		},
	}
}
