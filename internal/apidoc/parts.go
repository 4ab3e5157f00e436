package apidoc

import (
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// info is the document's title and what a client must know of every call.
func info() *openapi3.Info {
	return &openapi3.Info{
		Title:   "kiln API",
		Version: "v1",
		Description: "Submit, follow and steer workflows and training jobs, and keep what they use. " +
			"Every route but the public ones needs `Authorization: Bearer <token>`. " +
			"Errors are `{\"errors\": [{code, file, object, field, message, hint}]}`, with a stable KLN code (the `Code` schema lists them; docs/errors.md says what each means): every error answer is, whatever refused the request: a route, the web UI's file server (KLN-4070, KLN-4071), no route at a path or a wrong method (KLN-4063, KLN-4064, with Allow), a handler that failed (KLN-4009), plain HTTP sent to a server that serves HTTPS (KLN-4072). " +
			"A run of a project the token may not see is answered 404 (KLN-4001), exactly as one that does not exist. " +
			"Requests are limited per token, and without a known token per client address: beyond the limit they get 429 (KLN-4012) with Retry-After. " +
			"A body over the server's limit is refused with 413 (KLN-4005) from its Content-Length, before it is read, and one that arrives too slowly with 408. " +
			"This document is generated from the Go types the server reads and writes.",
		License: &openapi3.License{Name: "Apache-2.0", URL: "https://www.apache.org/licenses/LICENSE-2.0"},
	}
}

// servers is where the API is served: kiln serve's default address; a
// client is given its own.
func servers() openapi3.Servers {
	return openapi3.Servers{{URL: "http://127.0.0.1:8420", Description: "kiln serve's default address (--addr, KILN_ADDR); a client names the server it uses"}}
}

func securitySchemes() openapi3.SecuritySchemes {
	return openapi3.SecuritySchemes{
		"bearer": {Value: openapi3.NewJWTSecurityScheme().WithBearerFormat("kiln API token").
			WithDescription("an API token (kln_...), made by kiln token create or written to KILN_HOME/admin.token by kiln serve")},
		"partyCredential": {Value: openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer").
			WithDescription("a party credential (kpc_...), issued by this server to the calling party with kiln party add; the Kiln-Party header names that party. Unknown, revoked or not the header's party: 401 KLN-7001")},
		"channelToken": {Value: openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer").
			WithDescription("a channel token (kch_...), given to one attempt of one share of a federated run in KILN_FEDERATION_TOKEN; any other: 401 KLN-7024")},
	}
}

// tags group the operations.
func tags() openapi3.Tags {
	return openapi3.Tags{
		{Name: "runs", Description: "Submit runs of Workflows and TrainJobs, list, read, steer and follow them."},
		{Name: "runtimes", Description: "The training runtimes TrainJobs name."},
		{Name: "resources", Description: "Store WorkflowTemplates, Schedules, runtimes and quotas (kiln apply)."},
		{Name: "templates", Description: "Stored WorkflowTemplates."},
		{Name: "schedules", Description: "Schedules that start runs of templates."},
		{Name: "quotas", Description: "What each project may take of the machine."},
		{Name: "secrets", Description: "A project's secrets, which tasks read; values are never listed."},
		{Name: "cache", Description: "Stored results of cached tasks."},
		{Name: "parties", Description: "The kiln servers this one federates with (admin)."},
		{Name: "federation", Description: "What another party's server calls to run its share of a federated run."},
		{Name: "channel", Description: "The federation channel: what a share's processes call to send and receive messages (KILN_FEDERATION_CHANNEL)."},
		{Name: "meta", Description: "The server itself: version, the caller, this document, metrics."},
		{Name: "health", Description: "Liveness and readiness, for load balancers and orchestrators."},
		{Name: "ui", Description: "The web UI's files."},
	}
}

// errorResponseName names the shared answer of an error status.
func errorResponseName(status int) string {
	return "Error" + strconv.Itoa(status)
}

// errorStatusText says when each error status is answered.
var errorStatusText = map[int]string{
	http.StatusBadRequest:                   "the request is not right: a bad parameter, body or spec (the errors name the file, object and field)",
	http.StatusUnauthorized:                 "no token, or one the server does not know or has revoked (KLN-4003)",
	http.StatusForbidden:                    "the token's role or projects do not allow it (KLN-4004)",
	http.StatusNotFound:                     "no such run or object, or one of a project the token may not see",
	http.StatusRequestTimeout:               "the body arrived too slowly",
	http.StatusGone:                         "the sinceVersion of a request for changed nodes is not a version of the run (KLN-4075): list again without it",
	http.StatusConflict:                     "the object is not in a state that allows it (a run that has or has not ended, a gate not waiting), or an Idempotency-Key was used for another submission (KLN-4061)",
	http.StatusRequestEntityTooLarge:        "the body is over the server's limit (KLN-4005)",
	http.StatusPreconditionFailed:           "the request's If-Match or If-Unmodified-Since header is not met by the file (KLN-4071)",
	http.StatusRequestedRangeNotSatisfiable: "the request's Range is not within the file (KLN-4071)",
	http.StatusUnprocessableEntity:          "the spec is valid but cannot be admitted (KLN-2xxx)",
	http.StatusTooManyRequests:              "over the request rate allowed (KLN-4012); try again after Retry-After seconds",
	http.StatusInternalServerError:          "the server failed; its log says why",
	http.StatusBadGateway:                   "another party's server could not be reached or answered wrongly",
	http.StatusServiceUnavailable:           "the server is busy or not ready (KLN-4013, KLN-5052), or could not check a submission before its write timeout (KLN-4062, no run created); try again after Retry-After seconds",
	http.StatusInsufficientStorage:          "the server's disk is full (KLN-5004)",
}

// errorResponses are the shared error answers, one per status, each an
// ErrorList.
func errorResponses() openapi3.ResponseBodies {
	out := openapi3.ResponseBodies{}
	for status, text := range errorStatusText {
		r := openapi3.NewResponse().WithDescription(text).WithJSONSchemaRef(openapi3.NewSchemaRef(schemaRef+"ErrorList", nil))
		r.Content["application/json"].Example = errorExample(status)
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			r.Headers = openapi3.Headers{"Retry-After": {Value: &openapi3.Header{Parameter: openapi3.Parameter{
				Description: "seconds to wait before trying again", Schema: openapi3.NewSchemaRef("", openapi3.NewIntegerSchema()),
			}}}}
		}
		out[errorResponseName(status)] = &openapi3.ResponseRef{Value: r}
	}
	return out
}

// errorExample is an error answer of status as the server writes one.
func errorExample(status int) apiv1.ErrorList {
	e := &apiv1.Error{Code: apiv1.CodeInternal, Message: "internal error"}
	switch status {
	case http.StatusBadRequest:
		e = &apiv1.Error{Code: apiv1.CodeUnknownField, File: "train.yaml", Line: 7, Column: 5, Object: "Workflow/train", Field: "spec.tasks[0].comand", Message: `unknown field, did you mean "command"?`, Hint: apiv1.CodeUnknownField.Hint()}
	case http.StatusUnauthorized:
		e = &apiv1.Error{Code: apiv1.CodeUnauthenticated, Message: "the token is unknown or revoked", Hint: apiv1.CodeUnauthenticated.Hint()}
	case http.StatusNotFound:
		e = &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/train-x7k2p", Message: "no such run"}
	case http.StatusTooManyRequests:
		e = &apiv1.Error{Code: apiv1.CodeRateLimited, Message: "more than 100 requests at once or 50 a second on average", Hint: apiv1.CodeRateLimited.Hint()}
	}
	return apiv1.ErrorList{Errors: []*apiv1.Error{e}}
}
