package local

import (
	"fmt"
	"path/filepath"
	"sync"
)

// accounts numbers the accounts of projects that have none configured,
// one per project for good: the numbers are kept in
// KILN_HOME/task-accounts.json before a task runs under one, so a project
// keeps its account across supervisors and two projects never share one.
type accounts struct {
	path string
	mu   sync.Mutex
	byID map[string]Account // by project
}

func newAccounts(home string) *accounts {
	return &accounts{path: filepath.Join(home, "task-accounts.json")}
}

// of returns project's account, numbering a new one from first if it has
// none yet.
func (a *accounts) of(project string, first int) (Account, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byID == nil {
		a.byID = map[string]Account{}
		if _, err := readJSON(a.path, &a.byID); err != nil {
			a.byID = nil
			return Account{}, fmt.Errorf("reading %s: %w", a.path, err)
		}
	}
	if acc, ok := a.byID[project]; ok {
		return acc, nil
	}
	next := first
	for _, acc := range a.byID {
		next = max(next, acc.UID+1)
	}
	acc := Account{UID: next, GID: next}
	a.byID[project] = acc
	if err := writeJSON(a.path, a.byID); err != nil {
		delete(a.byID, project)
		return Account{}, fmt.Errorf("recording the account of project %s: %w", project, err)
	}
	return acc, nil
}
