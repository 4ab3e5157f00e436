package apidoc

import (
	"encoding/json"
	"slices"
	"strings"

	argo "kiln.dev/kiln/api/argo/v1alpha1"
	kubeflow "kiln.dev/kiln/api/kubeflow/v1"
	trainer "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// draft7 is the JSON Schema dialect of the kinds' schemas: the one
// editors' YAML support reads best.
const draft7 = "http://json-schema.org/draft-07/schema#"

// AllKinds is the file of the schema that takes any kind kiln reads.
const AllKinds = "kiln.json"

// Kind is a document users write.
type Kind struct {
	APIVersion, Kind string
	// Type is a value of its Go type.
	Type any
}

// File is the name of the kind's schema file.
func (k Kind) File() string {
	name := strings.ToLower(k.Kind) + ".json"
	switch k.APIVersion {
	case trainer.APIVersion:
		return "trainer-" + name
	case kubeflow.APIVersion:
		return "kubeflow-" + name
	case argo.APIVersion:
		return "argo-" + name
	}
	return name
}

// Kinds lists every kind kiln reads.
func Kinds() []Kind {
	kiln := apiv1.APIVersion
	return []Kind{
		{kiln, apiv1.KindWorkflow, apiv1.Workflow{}},
		{kiln, apiv1.KindTrainJob, apiv1.TrainJob{}},
		{kiln, apiv1.KindTrainingRuntime, apiv1.TrainingRuntime{}},
		{kiln, apiv1.KindClusterTrainingRuntime, apiv1.TrainingRuntime{}},
		{kiln, apiv1.KindWorkflowTemplate, apiv1.WorkflowTemplate{}},
		{kiln, apiv1.KindSchedule, apiv1.Schedule{}},
		{kiln, apiv1.KindProjectQuota, apiv1.ProjectQuota{}},
		{trainer.APIVersion, trainer.KindTrainJob, trainer.TrainJob{}},
		{trainer.APIVersion, trainer.KindTrainingRuntime, trainer.TrainingRuntime{}},
		{trainer.APIVersion, trainer.KindClusterTrainingRuntime, trainer.TrainingRuntime{}},
		{kubeflow.APIVersion, kubeflow.KindPyTorchJob, kubeflow.PyTorchJob{}},
		{kubeflow.APIVersion, kubeflow.KindTFJob, kubeflow.TFJob{}},
		{kubeflow.APIVersion, kubeflow.KindMPIJob, kubeflow.MPIJob{}},
		{kubeflow.APIVersion, kubeflow.KindXGBoostJob, kubeflow.XGBoostJob{}},
		{kubeflow.APIVersion, kubeflow.KindJAXJob, kubeflow.JAXJob{}},
		{kubeflow.APIVersion, kubeflow.KindPaddleJob, kubeflow.PaddleJob{}},
		{argo.APIVersion, argo.KindWorkflow, argo.Workflow{}},
		{argo.APIVersion, argo.KindWorkflowTemplate, argo.WorkflowTemplate{}},
		{argo.APIVersion, argo.KindClusterWorkflowTemplate, argo.WorkflowTemplate{}},
	}
}

// KindSchemas returns the JSON Schema of each kind, by file name, and
// under AllKinds the schema of a document of any of them, which picks
// the kind's schema by apiVersion and kind. r must be strict.
func KindSchemas(r *Reflector) (map[string][]byte, error) {
	const refs = "#/definitions/"
	kinds := Kinds()
	out := map[string][]byte{}
	all := map[string]json.RawMessage{}
	var branches []any
	var versions, names []string
	for _, k := range kinds {
		defs, roots, err := r.Defs(refs, k.Type)
		if err != nil {
			return nil, err
		}
		for n, d := range defs {
			all[n] = d
		}
		doc, err := json.MarshalIndent(map[string]any{
			"$schema": draft7, "title": k.Kind + " (" + k.APIVersion + ")",
			"allOf":       []any{map[string]any{"$ref": refs + roots[0]}, header(k)},
			"definitions": defs,
		}, "", "  ")
		if err != nil {
			return nil, err
		}
		out[k.File()] = append(doc, '\n')
		branches = append(branches, map[string]any{"if": header(k), "then": map[string]any{"$ref": refs + roots[0]}})
		versions, names = appendNew(versions, k.APIVersion), appendNew(names, k.Kind)
	}
	doc, err := json.MarshalIndent(map[string]any{
		"$schema": draft7, "title": "a document kiln reads",
		"type": "object", "required": []string{"apiVersion", "kind"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"enum": versions},
			"kind":       map[string]any{"enum": names},
		},
		"allOf": branches, "definitions": all,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	out[AllKinds] = append(doc, '\n')
	return out, nil
}

// header is the schema of k's apiVersion and kind.
func header(k Kind) map[string]any {
	return map[string]any{
		"required": []string{"apiVersion", "kind"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"const": k.APIVersion},
			"kind":       map[string]any{"const": k.Kind},
		},
	}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
