package workflow

import (
	"fmt"
	"slices"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// DefaultProject is the project of documents that name none, sent
// without one.
const DefaultProject = "default"

// clusterScoped are the kinds, of every group kiln reads, that belong to
// no namespace: Kubernetes ignores a namespace written on them, and so
// does kiln.
var clusterScoped = []string{apiv1.KindClusterTrainingRuntime, apiv1.KindProjectQuota, "ClusterWorkflowTemplate"}

// ProjectOf is the project that docs, read from the files of a run or of
// kiln apply, go to: given, when set (every metadata.namespace written
// must then be it); otherwise the one namespace they write, when exists
// says kiln has a project of that name; otherwise DefaultProject. A
// namespace that cannot be the project is KLN-1089 on its document's
// metadata.namespace. exists is asked at most once.
func ProjectOf(docs []Document, given string, exists func(project string) (bool, error)) (string, error) {
	var first *Document
	for i := range docs {
		d := &docs[i]
		ns := NamespaceOf(d)
		if ns == "" || slices.Contains(clusterScoped, d.Kind) {
			continue
		}
		switch {
		case given != "" && ns != given:
			return "", namespaceError(d, fmt.Sprintf("metadata.namespace is %q, but the documents go to project %q (--project)", ns, given),
				"drop metadata.namespace, or give --project "+ns)
		case first != nil && ns != NamespaceOf(first):
			return "", namespaceError(d, fmt.Sprintf("metadata.namespace is %q, but %s is in namespace %q: the documents of one run or apply go to one project", ns, first.Object(), NamespaceOf(first)),
				"give each document the same namespace, or apply them apart")
		case first == nil:
			first = d
		}
	}
	switch {
	case given != "":
		return given, nil
	case first == nil:
		return DefaultProject, nil
	}
	ns := NamespaceOf(first)
	if ns == DefaultProject {
		return ns, nil
	}
	ok, err := exists(ns)
	if err != nil || ok {
		return ns, err
	}
	return "", namespaceError(first, fmt.Sprintf("metadata.namespace is %q, and kiln has no project %s: no run, template, runtime, schedule, quota or token names it", ns, strconv.Quote(ns)),
		"give --project "+ns+" to start the project, or drop metadata.namespace to use project default")
}

func namespaceError(d *Document, msg, hint string) error {
	e := docError(d, apiv1.CodeNamespace, "metadata.namespace", msg)
	e.Hint = hint
	d.locate(e)
	return e
}
