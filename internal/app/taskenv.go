package app

import (
	"os"
	"slices"
)

// defaultPath is the PATH tasks get when kiln's own has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// baseEnvNames are the variables of kiln's own environment a served task
// starts with: where programs are and how text is read. Nothing else of
// the server's environment (its tokens, its cloud credentials) reaches a
// task unless named with --task-env.
var baseEnvNames = []string{"PATH", "LANG", "LC_ALL", "TZ"}

// BaseEnv is the environment every task of a served engine starts from:
// the variables in baseEnvNames and pass, as this process has them, and
// PATH and LANG defaults where it has none. The backend adds HOME, the
// task adds its own env, kiln adds KILN_*.
func BaseEnv(pass []string) []string {
	env := []string{}
	for _, name := range slices.Concat(baseEnvNames, pass) {
		if v, ok := os.LookupEnv(name); ok && !slices.ContainsFunc(env, hasName(name)) {
			env = append(env, name+"="+v)
		}
	}
	if !slices.ContainsFunc(env, hasName("PATH")) {
		env = append(env, "PATH="+defaultPath)
	}
	if !slices.ContainsFunc(env, hasName("LANG")) {
		env = append(env, "LANG=C.UTF-8")
	}
	return env
}

func hasName(name string) func(string) bool {
	return func(kv string) bool { return len(kv) > len(name) && kv[:len(name)+1] == name+"=" }
}
