package apidoc

import (
	"github.com/getkin/kin-openapi/openapi3"

	argo "kiln.dev/kiln/api/argo/v1alpha1"
	kubeflow "kiln.dev/kiln/api/kubeflow/v1"
	trainer "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The schemas of the documents a request body may be: one of the kinds
// that runs (a submission's), or one of those kiln apply stores.
const (
	runnableDocument = "RunnableDocument"
	storedDocument   = "StoredDocument"
)

// runnable reports whether a document of kind k is a submission's: a
// Workflow or a TrainJob, of kiln's group or translated from another.
func runnable(k Kind) bool {
	return k.Kind == apiv1.KindWorkflow || k.Kind == apiv1.KindTrainJob || k.APIVersion == kubeflow.APIVersion ||
		(k.APIVersion == argo.APIVersion && k.Kind == argo.KindWorkflow)
}

// documentName names the schema of a whole document of kind k: its Go
// type's schema with its apiVersion and kind fixed.
func documentName(k Kind) string {
	prefix := ""
	switch k.APIVersion {
	case trainer.APIVersion:
		prefix = "Trainer"
	case kubeflow.APIVersion:
		prefix = "Kubeflow"
	case argo.APIVersion:
		prefix = "Argo"
	}
	return prefix + k.Kind + "Document"
}

// documentSchemas adds to schemas, which hold the kinds' Go types, the
// schema of each kind's document, and RunnableDocument and
// StoredDocument, each one of the documents of its kinds.
func documentSchemas(schemas openapi3.Schemas) {
	var runs, stores []*openapi3.SchemaRef
	for _, k := range Kinds() {
		name := documentName(k)
		doc := &openapi3.Schema{AllOf: openapi3.SchemaRefs{ref(k.Type), headerSchema(k)}}
		doc.Description = "A " + k.Kind + " of " + k.APIVersion + ", as a file holds it."
		schemas[name] = openapi3.NewSchemaRef("", doc)
		if runnable(k) {
			runs = append(runs, openapi3.NewSchemaRef(schemaRef+name, nil))
		} else {
			stores = append(stores, openapi3.NewSchemaRef(schemaRef+name, nil))
		}
	}
	schemas[runnableDocument] = openapi3.NewSchemaRef("", &openapi3.Schema{
		OneOf:       runs,
		Description: "A document that runs: a Workflow or a TrainJob, or a job of another group that kiln translates into one.",
	})
	schemas[storedDocument] = openapi3.NewSchemaRef("", &openapi3.Schema{
		OneOf:       stores,
		Description: "A document kiln apply stores: a WorkflowTemplate, a Schedule, a training runtime or a ProjectQuota.",
	})
}

// headerSchema fixes a document's apiVersion and kind to k's.
func headerSchema(k Kind) *openapi3.SchemaRef {
	s := openapi3.NewObjectSchema().
		WithProperty("apiVersion", openapi3.NewStringSchema().WithEnum(k.APIVersion)).
		WithProperty("kind", openapi3.NewStringSchema().WithEnum(k.Kind))
	s.Required = []string{"apiVersion", "kind"}
	return openapi3.NewSchemaRef("", s)
}
