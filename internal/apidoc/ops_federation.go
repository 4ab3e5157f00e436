package apidoc

import (
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// federationOperations are the routes of federation: the parties a server knows (admin), and those other parties call.
func federationOperations() []Operation {
	return []Operation{
		{
			Method: "GET", Path: "/api/v1/parties", ID: "listParties", Tag: "parties", Role: Admin,
			Summary:     "the parties this server federates with",
			Description: "The parties this server federates with (admin), and this server's own party; no credential is ever listed, only whether the one the party issued is set or missing.",
			Answers:     []Answer{{Status: http.StatusOK, Description: "the parties", Type: apiv1.PartyList{}}},
			Errors:      []int{http.StatusNotFound},
		},
		{
			Method: "PUT", Path: "/api/v1/parties/{name}", ID: "putParty", Tag: "parties", Role: Admin,
			Summary:     "register a party",
			Description: "Register a party, or update it (admin): idempotent; a new party (or rotate) is issued a credential, answered this once and kept as its hash only. Unless noCheck, the party's server is called first: KLN-7004 if it is not reached, KLN-7006 if it is another party, KLN-7001 if it refuses the credential given.",
			Params: []Param{
				pathName,
			},
			Body:    &Body{Type: apiv1.PartyRequest{}},
			Answers: []Answer{{Status: http.StatusCreated, Description: "registered", Type: apiv1.PartyAdded{}}, {Status: http.StatusOK, Description: "updated", Type: apiv1.PartyAdded{}}},
			Errors:  []int{http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusBadGateway},
		},
		{
			Method: "DELETE", Path: "/api/v1/parties/{name}", ID: "deleteParty", Tag: "parties", Role: Admin,
			Summary:     "forget a party",
			Description: "Forget a party (admin); its credential is refused from then on. 404 (KLN-7003) if none is registered by that name.",
			Params: []Param{
				pathName,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "forgotten"}},
		},
		{
			Method: "GET", Path: "/api/v1/federation/party", ID: "getParty", Tag: "federation", Role: Party,
			Summary:     "who this server is",
			Description: "Who this server is, to a party whose credential it accepts; 404 (KLN-7002) if it has no party identity. Every answer of the federation routes, refusals too, names this server's party in its Kiln-Party header.",
			Params: []Param{
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "this server's party", Type: apiv1.PartyHello{}}},
			Errors:  []int{http.StatusNotFound},
		},
		{
			Method: "GET", Path: "/api/v1/federation/parts/{run}/outputs/{task}/{param}", ID: "getPartOutput", Tag: "federation", Role: Party,
			Summary:     "an output parameter of this party's share, for another party of the run",
			Description: "An output parameter of this party's share of task, asked by a party of the run whose share reads it: answered only when the workflow's to names a role the caller fills (else KLN-1066), this party's policy for the initiator lets the output leave (else KLN-7026) and the share succeeded. Both ends log it in their channel log as output.PARAM.",
			Params: []Param{
				partRun,
				{Name: "task", In: "path", Type: "", Description: "the task, by its name in the whole workflow"},
				{Name: "param", In: "path", Type: "", Description: "the output parameter"},
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "its value", Type: apiv1.PartOutput{}}},
		},
		{
			Method: "GET", Path: "/api/v1/federation/parts/{run}/outputs/{task}/artifacts/{name}", ID: "getPartArtifact", Tag: "federation", Role: Party,
			Summary:     "an artifact of this party's share, for another party of the run",
			Description: "The bytes of an artifact (a file of at most 256 MiB) of this party's share of task, asked by a party of the run whose share reads it, on the same terms as an output parameter; the Kiln-Digest header is their SHA-256.",
			Params: []Param{
				partRun,
				{Name: "task", In: "path", Type: "", Description: "the task, by its name in the whole workflow"},
				pathName, kilnParty,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "its bytes", Stream: "application/octet-stream", StreamDescription: "the artifact's bytes"}},
		},
		{
			Method: "POST", Path: "/api/v1/federation/check", ID: "checkPart", Tag: "federation", Role: Party,
			Summary:     "would this party create its part of a run",
			Description: "Asked by an initiator before it submits a federated run: 204 if this party would create its part of it, else the refusal creating it would give (its policy for the caller, KLN-7026, naming the rule and the field; the spec as compiled here). Nothing is kept; the run may be unnamed yet.",
			Params:      []Param{kilnParty},
			Body:        &Body{Type: apiv1.PartRequest{}},
			Answers:     []Answer{{Status: http.StatusNoContent, Description: "this party would create its part"}},
		},
		{
			Method: "PUT", Path: "/api/v1/federation/parts/{run}", ID: "createPart", Tag: "federation", Role: Party,
			Summary:     "create this party's part of a federated run",
			Description: "Create this party's part of a federated run, derived from the whole workflow; idempotent: sent again, it answers the part as it stands.",
			Params: []Param{
				partRun,
				kilnParty,
			},
			Body:    &Body{Type: apiv1.PartRequest{}},
			Answers: []Answer{{Status: http.StatusOK, Description: "the part", Type: apiv1.PartStatus{}}},
		},
		{
			Method: "GET", Path: "/api/v1/federation/parts/{run}", ID: "getPart", Tag: "federation", Role: Party,
			Summary:     "this party's part of a federated run as it stands",
			Description: "This party's part of a federated run as it stands (404 KLN-4001 unless the caller initiated the run).",
			Params: []Param{
				partRun,
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusOK, Description: "the part", Type: apiv1.PartStatus{}}},
		},
		{
			Method: "PUT", Path: "/api/v1/federation/parts/{run}/shares/{task}", ID: "orderShare", Tag: "federation", Role: Party,
			Summary:     "what the initiator wants of one share of the part",
			Description: "What the initiator wants of one share of the part (level-based: the latest order of an attempt wins).",
			Params: []Param{
				partRun,
				{Name: "task", In: "path", Type: "", Description: "the federated task"},
				kilnParty,
			},
			Body:    &Body{Type: apiv1.ShareOrder{}},
			Answers: []Answer{{Status: http.StatusOK, Description: "the share", Type: apiv1.ShareStatus{}}},
		},
		{
			Method: "POST", Path: "/api/v1/federation/parts/{run}/cancel", ID: "cancelPart", Tag: "federation", Role: Party,
			Summary: "cancel the part",
			Params: []Param{
				partRun,
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "cancelled"}},
		},
		{
			Method: "POST", Path: "/api/v1/federation/parts/{run}/end", ID: "endPart", Tag: "federation", Role: Party,
			Summary:     "end what of the part has not ended",
			Description: "End what of the part has not ended: the federated run ended, so its shares will not run again.",
			Params: []Param{
				partRun,
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "ended"}},
		},
		{
			Method: "POST", Path: "/api/v1/federation/parts/{run}/fail", ID: "failPart", Tag: "federation", Role: Party,
			Summary:     "end what of the part has not ended as failed",
			Description: "End what of the part has not ended as failed: the federated run failed, so its shares will not run again.",
			Params: []Param{
				partRun,
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "failed"}},
		},
		{
			Method: "POST", Path: "/api/v1/federation/parts/{run}/suspend", ID: "suspendPart", Tag: "federation", Role: Party,
			Summary: "suspend the part",
			Params: []Param{
				partRun,
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "suspended"}},
		},
		{
			Method: "POST", Path: "/api/v1/federation/parts/{run}/resume", ID: "resumePart", Tag: "federation", Role: Party,
			Summary: "resume the suspended part",
			Params: []Param{
				partRun,
				kilnParty,
			},
			Answers: []Answer{{Status: http.StatusNoContent, Description: "resumed"}},
		},
	}
}
