package workflow

import (
	"errors"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Convert returns docs, read from files, as kiln runs them: every
// document of another API group that kiln reads (training-operator's,
// Kubeflow Trainer's) replaced by its translation, the others as they
// are, and the fields the translations ignore somewhere. It checks the
// result offline, as kiln validate does, and returns every problem
// found, named as the user wrote it; there are no documents then.
func Convert(files []string, docs []Document) ([]Document, []Ignored, error) {
	out, err := Translate(docs)
	var check []Document
	var cluster []Document
	for _, d := range out {
		switch d.Kind {
		case apiv1.KindWorkflowTemplate:
		case apiv1.KindClusterTrainingRuntime:
			cluster = append(cluster, d) // applied, not run: checked as apply checks it
		default:
			check = append(check, d)
		}
	}
	_, checkErr := CheckFiles(files, check, nil)
	if len(cluster) > 0 {
		_, err := CheckApply(files, cluster, nil, nil)
		checkErr = errors.Join(checkErr, err)
	}
	if err := errors.Join(err, checkErr); err != nil {
		return nil, nil, err
	}
	var ignored []Ignored
	for i := range out {
		ignored = append(ignored, IgnoredFields(&out[i])...)
	}
	return out, ignored, nil
}
