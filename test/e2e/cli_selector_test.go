package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// kiln get runs -l and GET /api/v1/runs?label= take kubectl's selectors,
// embedded and through a server, and a selector that does not parse is
// a usage error (exit 2) or a 400 naming the field.
func TestLabelSelectorsListTheRunsTheySelect(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	for _, w := range []struct{ name, labels string }{{"ex", "{team: examples}"}, {"vi", "{team: vision, gpu: a100}"}, {"none", "{}"}} {
		f := writeFile(t, dir, w.name+".yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: "+w.name+", labels: "+w.labels+"}\n"+
			"spec: {tasks: [{name: t, command: ['true']}]}\n")
		if r := kiln(t, home, "run", "-q", f); r.code != 0 {
			t.Fatalf("run %s: %s", w.name, r.stderr)
		}
	}
	cases := map[string][]string{
		"team":                    {"ex", "vi"},
		"!team":                   {"none"},
		"team in (examples)":      {"ex"},
		"team!=examples":          {"none", "vi"},
		"team notin (examples,x)": {"none", "vi"},
		"team==vision,gpu":        {"vi"},
		"team,gpu notin (a100)":   {"ex"},
		"team=examples":           {"ex"},
		"nokey":                   nil,
	}
	names := func(runs []apiv1.Run) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	check := func(mode string, env []string) {
		for sel, want := range cases {
			r := kilnWithEnv(t, env, home, "get", "runs", "-l", sel, "-o", "json")
			var list []apiv1.Run
			if err := unmarshalList(r.stdout, "RunList", &list); err != nil || !slices.Equal(names(list), want) {
				t.Errorf("%s: get runs -l %q: %v, %v; want %v\n%s", mode, sel, names(list), err, want, r.stderr)
			}
		}
		r := kilnWithEnv(t, env, home, "get", "runs", "-l", "team in (examples")
		if r.code != 2 || !strings.Contains(r.stderr, "KLN-4002 --selector") {
			t.Errorf("%s: a selector that does not parse: exit %d, %q; want 2 and KLN-4002 --selector", mode, r.code, r.stderr)
		}
	}
	check("embedded", os.Environ())
	base, admin, _ := startServe(t, home)
	check("through a server", append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin))
	for sel, want := range cases {
		var list apiv1.RunList
		if code := apiGetJSON(t, base, admin, "/api/v1/runs?label="+url.QueryEscape(sel), &list); code != 200 {
			t.Errorf("?label=%s: %d", sel, code)
		}
		var got []string
		for _, r := range list.Items {
			got = append(got, r.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("?label=%s: %v, want %v", sel, got, want)
		}
	}
	code, body := apiGet(t, base, admin, "/api/v1/runs?label="+url.QueryEscape("a b"))
	var e struct{ Errors []apiv1.Error }
	if err := json.Unmarshal([]byte(body), &e); code != 400 || err != nil || len(e.Errors) != 1 || e.Errors[0].Field != "label" || e.Errors[0].Hint == "" {
		t.Errorf("?label=a b: %d %s; want a 400 naming label, with a hint", code, body)
	}
}
