// Package apidoc describes kiln's HTTP API and the documents users write:
// the OpenAPI document of every route, and a JSON Schema for each kind.
// Both are generated (go generate ./api/openapi) from the Go types of api/
// that the server reads and writes, and from the operations listed here;
// nothing in them is written by hand.
package apidoc

import "github.com/getkin/kin-openapi/openapi3"

// Operation is one route of the API: what it takes and what it answers.
type Operation struct {
	// Method and Path are the route, as the server's mux has it.
	Method, Path string
	// ID names the operation for generated clients (camelCase, unique).
	ID string
	// Tag groups operations in the document: runs, resources, ...
	Tag string
	// Summary says in a line what it does; Description says the rest.
	Summary, Description string
	// Role is who may call it: public, viewer, editor, admin or party;
	// the document says it as x-kiln-role.
	Role Role
	// Params are its path, query and header parameters.
	Params []Param
	// Body is what it reads, if anything.
	Body *Body
	// Answers are what it answers with success; its refusals come from
	// Errors and Role.
	Answers []Answer
	// Errors are the statuses of its error answers, beyond those every
	// operation of its role may get (401, 403 and 429).
	Errors []int
	// Unlimited operations are never refused for the request rate.
	Unlimited bool
}

// Role is who may call an operation.
type Role string

// The roles of callers.
const (
	Public Role = "public"
	Viewer Role = "viewer"
	Editor Role = "editor"
	Admin  Role = "admin"
	// Party is another kiln server, with the credential this one issued it.
	Party Role = "party"
	// Channel is a share's process, with its attempt's channel token.
	Channel Role = "channel"
)

// Param is a parameter of an operation.
type Param struct {
	// Name and In (path, query or header) place it.
	Name, In string
	// Description says what it does.
	Description string
	// Type is a value of its Go type: "", 0, false or []string{}.
	Type any
	// Enum lists the values it may take, if they are few.
	Enum []string
	// Default is what it is when absent.
	Default any
	// Maximum bounds an integer.
	Maximum *float64
	// Required is set for path parameters and for those an operation
	// cannot do without.
	Required bool
}

// Body is the request body of an operation.
type Body struct {
	// Description says what it holds.
	Description string
	// Type is a value of the Go type of a JSON body; nil when the body
	// is not JSON of one type.
	Type any
	// Content lists other media types it may come as, each with its
	// schema (nil: any text).
	Content map[string]*openapi3.SchemaRef
	// Optional bodies may be left out.
	Optional bool
	// Example is a body of Type, for the document's readers.
	Example any
}

// Answer is a successful answer of an operation.
type Answer struct {
	// Status is the HTTP status.
	Status int
	// Description says what it holds.
	Description string
	// Type is a value of the Go type of a JSON answer; nil for none.
	Type any
	// Stream names the media type of an answer that is not JSON
	// (text/plain, text/event-stream) and its description.
	Stream, StreamDescription string
	// Example is an answer of Type, for the document's readers.
	Example any
}

// bound is a parameter's Maximum.
func bound(v float64) *float64 { return &v }

// Parameters many operations take.
var (
	runID        = Param{Name: "id", In: "path", Type: ""}
	pathName     = Param{Name: "name", In: "path", Type: ""}
	projectParam = Param{Name: "project", In: "query", Type: "", Default: "default"}
	partRun      = Param{Name: "run", In: "path", Type: "", Description: "the federated run's ID at its initiator (not the part's)"}
	kilnParty    = Param{Name: "Kiln-Party", In: "header", Type: "", Description: "the calling party, which the credential must have been issued to", Required: true}
)
