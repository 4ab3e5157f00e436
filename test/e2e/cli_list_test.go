package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every command that lists prints, with -o json and -o yaml, a List as
// kubectl does: apiVersion kiln.dev/v1alpha1, kind <Item>List and items,
// [] when there are none; so one jsonpath over .items reads any of them.
func TestEveryListPrintsAKubectlList(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, f := range []string{"../../examples/schedules/nightly.yaml", "../../examples/quotas/quotas.yaml"} {
		if r := kiln(t, home, "apply", "-f", f); r.code != 0 {
			t.Fatalf("apply %s: %s", f, r.stderr)
		}
	}
	wf := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: listed}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	if r := kiln(t, home, "run", "-q", wf); r.code != 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	id := strings.TrimSpace(kiln(t, home, "get", "runs", "-o", "name").stdout)
	for _, c := range []struct {
		args  []string
		kind  string
		items int // at least
	}{
		{[]string{"get", "runs"}, "RunList", 1},
		{[]string{"get", "trainjobs"}, "RunList", 0},
		{[]string{"get", "runtimes"}, "TrainingRuntimeList", 1},
		{[]string{"get", "templates"}, "WorkflowTemplateList", 1},
		{[]string{"get", "schedules"}, "ScheduleList", 1},
		{[]string{"get", "quotas"}, "ProjectQuotaList", 3},
		{[]string{"cache", "ls"}, "CacheEntryList", 0},
		{[]string{"artifacts", "ls", id}, "RunArtifactList", 0},
		{[]string{"party", "list"}, "PartyList", 0},
		{[]string{"token", "list"}, "TokenList", 0},
		{[]string{"secret", "list"}, "SecretList", 0},
		{[]string{"config", "get-contexts"}, "ContextList", 0},
		{[]string{"gc", "--dry-run"}, "DeletionList", 0},
	} {
		r := kiln(t, home, append(c.args, "-o", "json")...)
		var items []json.RawMessage
		if err := unmarshalList(r.stdout, c.kind, &items); r.code != 0 || err != nil || items == nil || len(items) < c.items {
			t.Errorf("kiln %v -o json: exit %d, %v, %d items; want a %s of at least %d\n%s%s", c.args, r.code, err, len(items), c.kind, c.items, r.stdout, r.stderr)
		}
		if c.kind == "ProjectQuotaList" {
			continue // -o yaml prints documents kiln apply takes back
		}
		y := kiln(t, home, append(c.args, "-o", "yaml")...)
		if y.code != 0 || !strings.Contains(y.stdout, "apiVersion: kiln.dev/v1alpha1\n") || !strings.Contains(y.stdout, "kind: "+c.kind+"\n") ||
			!strings.Contains(y.stdout, "items:") {
			t.Errorf("kiln %v -o yaml: exit %d\n%s", c.args, y.code, y.stdout)
		}
	}
	if r := kiln(t, home, "get", "templates", "-o", "jsonpath={.items[*].metadata.name}"); strings.TrimSpace(r.stdout) != "nightly-train" {
		t.Errorf("get templates -o jsonpath={.items[*].metadata.name}: %q %q", r.stdout, r.stderr)
	}
	if r := kiln(t, home, "get", "schedules", "-o", "jsonpath={.kind} {.items[0].metadata.name}"); strings.TrimSpace(r.stdout) != "ScheduleList nightly" {
		t.Errorf("get schedules -o jsonpath: %q %q", r.stdout, r.stderr)
	}
}
