package workflow

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/fetch"
)

// initializeTask checks a task that fetches a training job's dataset or
// model: its name, and a storageUri kiln can fetch.
func (c *checker) initializeTask(field string, t *apiv1.Task) Task {
	it := t.Initialize
	if len(t.Command) > 0 || t.Train != nil {
		c.add(apiv1.CodeInvalidValue, field, "task %q sets initialize with command or train: set one", t.Name)
	}
	if it.Name != apiv1.InitializerDataset && it.Name != apiv1.InitializerModel {
		c.add(apiv1.CodeInvalidValue, field+".initialize.name", "%q is not an initializer: use dataset or model", it.Name)
	}
	uri := ""
	if it.StorageURI != nil {
		uri = *it.StorageURI
	}
	if _, err := fetch.Parse(uri); err != nil {
		e := apiv1.Errors(err)[0]
		e2 := docError(c.doc, e.Code, field+".initialize.storageUri", e.Message)
		e2.Hint = e.Hint
		c.errs = append(c.errs, e2)
	}
	c.env(field+".initialize.env", it.Env)
	if r := it.SecretRef; r != nil && len(validation.IsDNS1123Subdomain(r.Name)) > 0 {
		c.addHint(apiv1.CodeInvalidName, field+".initialize.secretRef.name", "name a kiln secret of the job's project (kiln secret set NAME)",
			"%q is not a secret name", r.Name)
	}
	c.outputs(field+".outputs", t.Outputs, false)
	return Task{
		Spec: t, Kind: apiv1.NodeKindInitializer,
		Timeout: c.duration(field+".timeout", t.Timeout), Retry: c.retry(field+".retries", t.Retries),
		Request: c.request(field+".resources", t.Resources), PerHost: c.request(field+".resources", t.Resources),
	}
}

// initializerTasks are the tasks that run a TrainJob's initializers, in
// the order dataset, model, and the names the trainer reads.
func initializerTasks(tj *apiv1.TrainJob) (tasks []apiv1.Task, names []string) {
	in := tj.Spec.Initializer
	if in == nil {
		return nil, nil
	}
	image := ""
	if tj.Spec.Trainer != nil {
		image = tj.Spec.Trainer.Image
	}
	for _, s := range []struct {
		name string
		src  *apiv1.SourceInitializer
	}{{apiv1.InitializerDataset, in.Dataset}, {apiv1.InitializerModel, in.Model}} {
		if s.src == nil {
			continue
		}
		t := apiv1.Task{
			Name:        s.name + apiv1.InitializerSuffix,
			Initialize:  &apiv1.InitializeTask{Name: s.name, SourceInitializer: *s.src},
			Outputs:     &apiv1.Outputs{Artifacts: []apiv1.Artifact{{Name: s.name, Path: s.name}}},
			Image:       image,
			PodTemplate: tj.Spec.PodTemplate,
			Priority:    tj.Spec.Priority,
			// Keyed by the source's content (node.Versioned): reused
			// while the file, or what the server serves, is unchanged.
			Cache: &apiv1.Cache{},
		}
		if s.src.Image != "" {
			t.Image = s.src.Image
		}
		tasks, names = append(tasks, t), append(names, s.name)
	}
	return tasks, names
}

var initializerField = regexp.MustCompile(`^spec\.tasks\[(\d+)\]\.(initialize\.|image|outputs|timeout|retries)`)

// initializerFields maps a field of an initializer's task back to the
// TrainJob's spec.initializer.NAME field a user wrote.
func initializerFields(field string, wf *apiv1.Workflow) string {
	m := initializerField.FindStringSubmatch(field)
	if m == nil {
		return field
	}
	i, _ := strconv.Atoi(m[1])
	if i >= len(wf.Spec.Tasks) || wf.Spec.Tasks[i].Initialize == nil {
		return field
	}
	prefix := fmt.Sprintf("spec.tasks[%d].", i)
	rest := strings.TrimPrefix(strings.TrimPrefix(field, prefix), "initialize.")
	return "spec.initializer." + wf.Spec.Tasks[i].Initialize.Name + "." + rest
}
