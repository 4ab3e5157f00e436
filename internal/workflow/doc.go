// Package workflow turns YAML files into checked, compiled workflows.
//
// Read splits files into documents, Decode reads one strictly (unknown
// fields are errors), Validate returns every problem as a coded
// *apiv1.Error naming file, object and field, and Compile turns a valid
// workflow into an immutable Plan the engine runs.
package workflow
