// Package expr compiles and evaluates the two expression languages of a
// workflow task: its condition (when:) and its dependencies (depends:).
//
// A condition is a CEL expression that must give a boolean. It may read:
//
//	params.<name>, params["name"]                      a param of the run (string)
//	tasks.<name>, tasks["name-with-dashes"]            an upstream task, with:
//	  .phase                                           "Succeeded", "Failed", "Skipped" (string)
//	  .succeeded, .failed, .skipped                    the same as booleans
//	  .outputs.parameters.<p>, .outputs.parameters["p"] one of its output parameters (string)
//	item                                               in a map task's child: its item, JSON-decoded (dyn)
//	itemIndex                                          in a map task's child: its item's index, from 0 (int)
//
// with CEL's standard functions and macros and the strings extension
// (ext.Strings). Outputs and params are strings: a condition converts them
// itself, as in double(tasks.eval.outputs.parameters.accuracy) > 0.9 or
// int(params.epochs) > 3. Numbers of different types compare as numbers.
//
// Every name a condition reads is checked when it is compiled, so an unknown
// param, task, field or output parameter is a compile error, not a false
// condition at run time. Keys must be literal strings for the same reason.
//
// A depends expression is Argo Workflows' "enhanced depends": task names and
// task results joined with &&, || and !, with parentheses, as in
// a && (b.Failed || c.Skipped).
//
// Both kinds compile once and are safe to evaluate many times, from many
// goroutines. Compile errors are *Error values naming the line and column.
package expr
