package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestRunListFlagsBecomeAQuery(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC)
	f := runListFlags{phase: "failed, CANCELLED", since: "2h", until: "2026-11-23T15:00:00Z", search: "bert", limit: 10, ascending: true}
	q, err := f.query(now)
	if err != nil {
		t.Fatal(err)
	}
	want := apiv1.RunQuery{
		Phases: []apiv1.Phase{apiv1.PhaseFailed, apiv1.PhaseCancelled}, Since: now.Add(-2 * time.Hour),
		Until: time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC), Search: "bert", Limit: 10, Ascending: true,
	}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	for name, bad := range map[string]struct {
		f     runListFlags
		code  apiv1.Code
		field string
	}{
		"an unknown phase":      {runListFlags{limit: 50, phase: "running,done"}, apiv1.CodeUnknownPhase, "--phase"},
		"a since that is not":   {runListFlags{limit: 50, since: "yesterday"}, apiv1.CodeBadTime, "--since"},
		"a negative duration":   {runListFlags{limit: 50, until: "-2h"}, apiv1.CodeBadTime, "--until"},
		"a watch of json lines": {runListFlags{limit: 50, watch: true, output: "json"}, apiv1.CodeUsage, ""},
		"a limit past a page":   {runListFlags{limit: apiv1.MaxRunPage + 1}, apiv1.CodeUsage, "--limit"},
		"a limit of nothing":    {runListFlags{limit: 0}, apiv1.CodeUsage, "--limit"},
		"an open set":           {runListFlags{limit: 50, label: "team in (a"}, apiv1.CodeUsage, "--selector"},
		"a number comparison":   {runListFlags{limit: 50, label: "gpus>2"}, apiv1.CodeUsage, "--selector"},
	} {
		_, err := bad.f.query(now)
		errs := apiv1.Errors(err)
		if len(errs) != 1 || errs[0].Code != bad.code || errs[0].Field != bad.field || !usageCodes[errs[0].Code] {
			t.Errorf("%s: %v, want a %s of %q that exits 2", name, err, bad.code, bad.field)
		}
	}
}

func TestWideRowsCountTasksAndListLabels(t *testing.T) {
	t.Parallel()
	r := &apiv1.Run{
		ID: "wf-1", Name: "wf", Project: "vision", Labels: map[string]string{"team": "a", "env": "dev"},
		Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning, Progress: &apiv1.RunProgress{Total: 9, Done: 4, Succeeded: 3, Failed: 1, Running: 2}},
	}
	row := runRow(r, true)
	if diff := cmp.Diff([]string{"vision", "Running", "4/9", "2 running, 3 succeeded, 1 failed"}, row[2:6]); diff != "" {
		t.Errorf("wide cells (-want +got):\n%s", diff)
	}
	if row[8] != "env=dev,team=a" {
		t.Errorf("labels cell %q", row[8])
	}
}

func TestAWatchPrintsOnlyRunsThatChanged(t *testing.T) {
	t.Parallel()
	a := &apiv1.Run{ID: "a-1", Name: "a", Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning}}
	b := &apiv1.Run{ID: "b-1", Name: "b", Status: apiv1.RunStatus{Phase: apiv1.PhasePending}}
	g := runTable(false)
	seen := map[apiv1.RunID]string{a.ID: runState(a), b.ID: runState(b)}
	var out bytes.Buffer
	if err := printChanged(&out, g, seen, []*apiv1.Run{b, a}, false); err != nil || out.Len() != 0 {
		t.Fatalf("nothing changed: printed %q (%v)", out.String(), err)
	}
	done := *a
	done.Status.Phase = apiv1.PhaseSucceeded
	c := &apiv1.Run{ID: "c-1", Name: "c", Status: apiv1.RunStatus{Phase: apiv1.PhasePending}}
	if err := printChanged(&out, g, seen, []*apiv1.Run{c, b, &done}, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "a-1 ") || !strings.Contains(lines[0], "Succeeded") || !strings.HasPrefix(lines[1], "c-1 ") {
		t.Errorf("after a changed and c appeared: %q", lines)
	}
}

func TestJSONPathReadsListsAsItems(t *testing.T) {
	t.Parallel()
	runs := []*apiv1.Run{{ID: "a-1", Status: apiv1.RunStatus{Phase: apiv1.PhaseFailed}}, {ID: "b-2"}}
	for format, want := range map[string]string{
		"jsonpath={.items[*].id}":                    "a-1 b-2\n",
		"jsonpath='{.items[0].status.phase}'":        "Failed\n",
		`jsonpath={range .items[*]}{.id}{"\n"}{end}`: "a-1\nb-2\n",
		"jsonpath=.items[1].id":                      "b-2\n",
	} {
		var out bytes.Buffer
		if done, err := printObject(&out, format, runs); !done || err != nil || out.String() != want {
			t.Errorf("-o %s: %q (%v), want %q", format, out.String(), err, want)
		}
	}
	var out bytes.Buffer
	if _, err := printObject(&out, "jsonpath={.items[", runs); apiv1.CodeOf(err) != apiv1.CodeOutputFormat {
		t.Errorf("a template that does not parse: %v, want KLN-4053", err)
	}
	if _, err := printObject(&out, "xml", runs); apiv1.CodeOf(err) != apiv1.CodeOutputFormat {
		t.Errorf("-o xml: %v, want KLN-4053", err)
	}
}
