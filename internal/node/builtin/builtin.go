// Package builtin lists the node handlers kiln ships. Adding a kind of
// node means a package under internal/node and one line here.
package builtin

import (
	"os"

	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/command"
	"kiln.dev/kiln/internal/node/dynamic"
	"kiln.dev/kiln/internal/node/federated"
	"kiln.dev/kiln/internal/node/gate"
	"kiln.dev/kiln/internal/node/initializer"
	"kiln.dev/kiln/internal/node/mapper"
	"kiln.dev/kiln/internal/node/sensor"
	"kiln.dev/kiln/internal/node/subworkflow"
	"kiln.dev/kiln/internal/node/train"
)

// Handlers returns one of each built-in node handler.
func Handlers() []node.Handler {
	return []node.Handler{
		command.New(),
		train.New(),
		mapper.New(),
		dynamic.New(),
		subworkflow.New(),
		subworkflow.Exit(),
		gate.New(),
		sensor.New(),
		initializer.New(executable()),
		federated.New(),
	}
}

// executable is this kiln's path, or "" if it cannot be told.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// Registry returns a registry of the built-in handlers.
func Registry() *node.Registry {
	r, err := node.NewRegistry(Handlers()...)
	if err != nil {
		panic(err) // the list above names each kind once: code, not input, broke
	}
	return r
}
