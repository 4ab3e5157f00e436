package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kiln validate reads every kind that kiln apply and kiln run read: every
// example of the project passes it, each object named ok, and the files
// kiln apply takes (templates, schedules, quotas) are applied too, so
// that the two can never again disagree on one of them.
func TestValidateReadsEveryExample(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir("../../examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) < 10 {
		t.Fatalf("examples: %d files, %v", len(files), err)
	}
	home := newHome(t)
	for _, f := range files {
		r := kiln(t, home, "validate", f)
		if r.code != 0 || strings.Contains(r.stderr, "error:") {
			t.Errorf("kiln validate %s: exit %d\n%s%s", f, r.code, r.stdout, r.stderr)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objects := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "kind: ") && l != "kind: TrainingRuntime" { // checked with the job beside it
				objects++
			}
		}
		if got := strings.Count(r.stdout, "ok: "+f+": "); got < objects || got == 0 {
			t.Errorf("kiln validate %s said ok %d times for %d objects:\n%s", f, got, objects, r.stdout)
		}
		if !appliable(string(b)) {
			continue
		}
		if r := kiln(t, home, "apply", "-f", f); r.code != 0 {
			t.Errorf("kiln apply -f %s (validate took it): exit %d\n%s", f, r.code, r.stderr)
		}
	}
}

// appliable reports whether a file holds the kinds kiln apply stores.
func appliable(text string) bool {
	for _, k := range []string{"WorkflowTemplate", "Schedule", "ProjectQuota"} {
		if strings.Contains(text, "\nkind: "+k+"\n") {
			return true
		}
	}
	return false
}

// A Schedule kiln apply would refuse, validate refuses with the same
// codes, each at its field, and says where the template it misses may
// be found; one it would take is ok.
func TestValidateChecksSchedulesAsApplyDoes(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: nightly}
spec:
  schedule: "0 25 * * *"
  workflowTemplateRef: {name: missing}
`)
	r := kiln(t, home, "validate", bad)
	for _, want := range []string{
		"KLN-1070 " + bad + ":5:3: Schedule/nightly: spec.schedule:",
		"KLN-1073 " + bad + ":6:25: Schedule/nightly: spec.workflowTemplateRef.name: no WorkflowTemplate \"missing\" is in the files",
	} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("kiln validate of a bad Schedule: exit %d, %q; want 1 and %q", r.code, r.stderr, want)
		}
	}
	applied := kiln(t, home, "apply", "-f", bad)
	if applied.code == 0 || !strings.Contains(applied.stderr, "KLN-1070") || !strings.Contains(applied.stderr, "KLN-1073") {
		t.Errorf("kiln apply of the same Schedule: exit %d, %q; want the same codes", applied.code, applied.stderr)
	}
	tmpl := writeFile(t, dir, "tmpl.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: missing}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	if r := kiln(t, home, "apply", "-f", tmpl); r.code != 0 {
		t.Fatalf("apply template: %s", r.stderr)
	}
	good := writeFile(t, dir, "good.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Schedule\nmetadata: {name: nightly}\nspec: {schedule: '0 2 * * *', workflowTemplateRef: {name: missing}}\n")
	if r := kiln(t, home, "validate", good); r.code != 1 || !strings.Contains(r.stderr, "KLN-1073") {
		t.Errorf("kiln validate of the files alone: exit %d, %q; want KLN-1073", r.code, r.stderr)
	}
	if r := kiln(t, home, "validate", "--project", "default", good); r.code != 0 || !strings.Contains(r.stdout, "ok: "+good+": Schedule/nightly") {
		t.Errorf("kiln validate --project default, the template stored: exit %d, %q %q; want ok", r.code, r.stdout, r.stderr)
	}
}

// A mistyped command, subcommand, flag or field is answered with what was
// meant, and every spec error says file:line:column, embedded and
// through a server alike (the server sends line and column in its JSON).
func TestMistakesSayWhatWasMeantAndWhere(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"vaildate", "x"}, `unknown command "vaildate" for "kiln"; did you mean validate?`},
		{[]string{"get", "templtes"}, `; did you mean templates?`},
		{[]string{"get", "runs", "--limt", "3"}, `unknown flag: --limt; did you mean --limit?`},
		{[]string{"run", "--parm", "a=b", "x.yaml"}, `did you mean --param?`},
	} {
		if r := kiln(t, newHome(t), c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("kiln %v: exit %d, %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	wf := writeFile(t, t.TempDir(), "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: w}
spec:
  tasks:
  - name: a
    command: ["true"]
    retires: 2
  - name: b
    command: ["true"]
    dependsOn: [nope]
`)
	for _, m := range cliModes(t) {
		r := m.kiln(t, "run", wf)
		for _, want := range []string{
			"error: KLN-1002 " + wf + `:8:5: Workflow/w: spec.tasks[0].retires: unknown field, did you mean "retries"?`,
			"error: KLN-1007 " + wf + ":11:17: Workflow/w: spec.tasks[1].dependsOn[0]:",
		} {
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("%s: kiln run of a bad spec: exit %d, %q; want 1 and %q", m.name, r.code, r.stderr, want)
			}
		}
	}
}

// TestValidateNotesWhatItsBackendIgnores: kiln validate notes the fields
// the backend it checks for ignores, and not another backend's: a
// container's image is ignored by the local backend only.
func TestValidateNotesWhatItsBackendIgnores(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	file := filepath.Join(operatorDir(t), "ex-tf-simple.yaml")
	const image = "containers[0].image is ignored on the local backend"
	if r := kiln(t, home, "validate", file); r.code != 0 || !strings.Contains(r.stdout, image) {
		t.Errorf("kiln validate (local) does not note the image: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := kiln(t, home, "validate", "--backend", "kubernetes", file)
	if r.code != 0 || strings.Contains(r.stdout, image) || !strings.Contains(r.stdout, "backoffLimit is ignored on every backend") {
		t.Errorf("kiln validate --backend kubernetes notes what only the local backend ignores: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// One mistake repeated in 200 tasks, beside 3 of another: kiln validate
// lists the first 50 of it, says how many more there were, and lists the
// 3 others, instead of an error per task.
func TestValidateListsAMistakeRepeatedFiftyTimesAndCountsTheRest(t *testing.T) {
	t.Parallel()
	var spec strings.Builder
	spec.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: many}\nspec:\n  tasks:\n")
	for i := range 200 {
		fmt.Fprintf(&spec, "  - {name: t%d, dependsOn: [nope], command: [x]}\n", i)
	}
	for i := range 3 {
		fmt.Fprintf(&spec, "  - {name: \"bad name %d\", command: [x]}\n", i)
	}
	file := writeFile(t, t.TempDir(), "many.yaml", spec.String())
	r := kiln(t, newHome(t), "validate", file)
	if r.code == 0 {
		t.Fatalf("kiln validate took 200 bad tasks:\n%s", r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	count := map[string]int{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 {
			count[f[1]]++
		}
	}
	if count["KLN-1007"] != 50 || count["KLN-1005"] != 3 || count["KLN-1086"] != 1 || len(lines) != 54 {
		t.Errorf("errors by code %v in %d lines, want 50 KLN-1007, 3 KLN-1005 and 1 KLN-1086:\n%s", count, len(lines), r.stderr)
	}
	if !strings.Contains(r.stderr, "spec.tasks[*].dependsOn[*]: … and 150 more KLN-1007 like these") {
		t.Errorf("no count of the 150 others:\n%s", r.stderr)
	}
}
