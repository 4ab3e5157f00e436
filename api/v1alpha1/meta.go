package v1alpha1

// TypeMeta names the schema of a document, as in Kubernetes.
type TypeMeta struct {
	// APIVersion must be APIVersion ("kiln.dev/v1alpha1").
	APIVersion string `json:"apiVersion"`
	// Kind is the resource kind, for example "Workflow".
	Kind string `json:"kind"`
}

// ObjectMeta is the metadata every resource carries.
type ObjectMeta struct {
	// Name is a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters.
	Name string `json:"name"`
	// Namespace, as Kubernetes documents write it, is the project the
	// resource goes to: the project given (--project) or, with none given,
	// an existing project of that name. Empty: the project given, or
	// "default".
	Namespace string `json:"namespace,omitempty"`
	// Labels are free key-value pairs kept with every run of the resource.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are free key-value pairs kiln does not interpret.
	Annotations map[string]string `json:"annotations,omitempty"`
}
