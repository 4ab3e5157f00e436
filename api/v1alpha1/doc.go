// Package v1alpha1 holds kiln's wire types: the resources users write
// (Workflow), the records kiln keeps about them (Run, NodeStatus,
// AttemptStatus, Event) and the coded errors users see. It imports only the
// standard library, so clients can depend on it without pulling in kiln.
package v1alpha1

// APIVersion is the apiVersion every kiln resource carries.
const APIVersion = "kiln.dev/v1alpha1"
