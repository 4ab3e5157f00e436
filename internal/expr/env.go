package expr

import (
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
)

// Env says what a condition may refer to. Names it does not list are compile
// errors.
type Env struct {
	// Params are the names of the run's params.
	Params []string
	// Tasks maps each task a condition may name to the names of its
	// declared output parameters. The caller checks, with
	// Condition.Tasks, that the tasks a condition reads are upstream.
	Tasks map[string][]string
	// Item is true for the children of a map task: they may read item and
	// itemIndex.
	Item bool
	// Workflow is true for onExit tasks: they may read workflow.status
	// and workflow.failures.
	Workflow bool
}

// Names of the variables a condition sees.
const (
	varParams    = "params"
	varTasks     = "tasks"
	varItem      = "item"
	varItemIndex = "itemIndex"
	varWorkflow  = "workflow"
)

// task is what a condition sees of a task: tasks.<name>. Its CEL type is
// kiln.Task, so that a field's type is checked at compile.
type task struct {
	Phase     string  `cel:"phase"`
	Succeeded bool    `cel:"succeeded"`
	Failed    bool    `cel:"failed"`
	Skipped   bool    `cel:"skipped"`
	Outputs   outputs `cel:"outputs"`
}

// outputs is tasks.<name>.outputs, of CEL type kiln.Outputs.
type outputs struct {
	Parameters map[string]string `cel:"parameters"`
}

// newTask returns what a condition sees of a task with data d.
func newTask(d TaskData) task {
	return task{
		Phase:     d.Phase,
		Succeeded: d.Phase == "Succeeded",
		Failed:    d.Phase == "Failed",
		Skipped:   d.Phase == "Skipped",
		Outputs:   outputs{Parameters: d.Outputs},
	}
}

// workflow is what an onExit task's condition sees of the run: its
// result so far and the tasks that failed, of CEL type kiln.Workflow.
type workflow struct {
	Status   string    `cel:"status"`
	Failures []failure `cel:"failures"`
}

// failure is one element of workflow.failures, of CEL type kiln.Failure.
type failure struct {
	Name    string `cel:"name"`
	Phase   string `cel:"phase"`
	Code    string `cel:"code"`
	Message string `cel:"message"`
}

// isTaskField reports whether kiln.Task has a field named name.
func isTaskField(name string) bool {
	switch name {
	case "phase", "succeeded", "failed", "skipped", "outputs":
		return true
	}
	return false
}

// costLimit bounds the work of one evaluation, in CEL's cost units (about
// one per operation, one per element a comprehension visits).
const costLimit = 1_000_000

// celEnv is the CEL environment every condition compiles in. It declares
// item and itemIndex always; the name check refuses them outside map
// tasks, and workflow outside onExit tasks. It is built once, on first use, and never changed after: building
// it takes several times as long as compiling a condition (0.2 to 0.7 ms
// against 0.05).
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(
			types.NativeTypeFor[task](types.NativeTypeAlias("kiln.Task")),
			types.NativeTypeFor[outputs](types.NativeTypeAlias("kiln.Outputs")),
			types.NativeTypeFor[workflow](types.NativeTypeAlias("kiln.Workflow")),
			types.NativeTypeFor[failure](types.NativeTypeAlias("kiln.Failure")),
			ext.ParseStructTags(true),
		),
		ext.Strings(),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(MaxLen),
		cel.Variable(varParams, cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable(varTasks, cel.MapType(cel.StringType, cel.ObjectType("kiln.Task"))),
		cel.Variable(varItem, cel.DynType),
		cel.Variable(varItemIndex, cel.IntType),
		cel.Variable(varWorkflow, cel.ObjectType("kiln.Workflow")),
	)
})
