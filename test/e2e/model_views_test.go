package e2e

// The invariant that what a user reads agrees wherever they read it: kiln
// describe (its JSON and its text), the API, and so the UI, which reads
// the API.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"syscall"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// checkViews starts kiln serve on the scenario's home once every run has
// ended (so its engine has nothing to do) and checks, for each run, that
// the API's run, events and run list agree with kiln describe's JSON, and
// that describe's text shows the same phases and events.
func (d *driver) checkViews() error {
	base, token, serve := startServeAs(d.t, d.home, nil, nil, "--isolation", "none")
	defer func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() }()
	d.note("kiln serve on %s to compare the views", base)
	get := func(path string, v any) error {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
		}
		return json.NewDecoder(resp.Body).Decode(v)
	}
	var list apiv1.RunList
	if err := get("/api/v1/runs?limit=500", &list); err != nil {
		return violated("views", "%v", err)
	}
	for _, r := range d.runs {
		if err := d.checkRunViews(r.id, get, list); err != nil {
			return err
		}
	}
	return nil
}

// checkRunViews compares the views of run id.
func (d *driver) checkRunViews(id apiv1.RunID, get func(string, any) error, list apiv1.RunList) error {
	described, err := d.describeDetail(id)
	if err != nil {
		return err
	}
	var run apiv1.Run
	var events apiv1.EventList
	if err := get("/api/v1/runs/"+string(id), &run); err != nil {
		return violated("views", "%v", err)
	}
	if err := get("/api/v1/runs/"+string(id)+"/events", &events); err != nil {
		return violated("views", "%v", err)
	}
	if !sameJSON(described.Run, run) {
		return violated("views", "run %s: kiln describe -o json and GET /api/v1/runs/%s differ:\n%s\n%s", id, id, asJSON(described.Run), asJSON(run))
	}
	if !sameJSON(described.Events, events.Items) {
		return violated("views", "run %s: kiln describe -o json shows %d events, the API %d:\n%s\n%s", id, len(described.Events), len(events.Items), asJSON(described.Events), asJSON(events.Items))
	}
	listed := false
	for _, item := range list.Items {
		if item.ID == id {
			listed = true
			if item.Status.Phase != run.Status.Phase {
				return violated("views", "run %s: the run list says %s, the run %s", id, item.Status.Phase, run.Status.Phase)
			}
		}
	}
	if !listed {
		return violated("views", "run %s is not in the API's run list", id)
	}
	return d.checkDescribeText(run, events.Items)
}

// checkDescribeText checks kiln describe's text shows run's phase, each
// node with its phase, and every event.
func (d *driver) checkDescribeText(run apiv1.Run, events []apiv1.Event) error {
	res := kiln(d.t, d.home, "describe", "run", string(run.ID), "--children", "--events=-1")
	if res.code != 0 {
		return violated("describe", "kiln describe run %s exited %d: %s", run.ID, res.code, res.stderr)
	}
	head, rest, _ := strings.Cut(res.stdout, "\nTasks:\n")
	tasks, evs, _ := strings.Cut(rest, "\nEvents:\n")
	if !strings.Contains(head, "\nPhase:     "+string(run.Status.Phase)+"\n") {
		return violated("views", "run %s is %s in the API; describe says:\n%s", run.ID, run.Status.Phase, head)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(tasks, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(f[1], "#") {
			rows[f[0]] = f[1]
		}
	}
	for _, n := range run.Status.Nodes {
		if got := rows[n.Name]; got != string(n.Phase) {
			return violated("views", "run %s: node %s is %s in the API, %q in describe's table:\n%s", run.ID, n.Name, n.Phase, got, tasks)
		}
	}
	if got := strings.Count(strings.TrimRight(evs, "\n"), "\n") + 1; strings.TrimSpace(evs) != "" && got < len(events) {
		return violated("views", "run %s: describe lists %d event lines, the API %d events", run.ID, got, len(events))
	}
	return nil
}

// sameJSON reports whether a and b encode to the same JSON values.
func sameJSON(a, b any) bool {
	var x, y any
	if json.Unmarshal([]byte(asJSON(a)), &x) != nil || json.Unmarshal([]byte(asJSON(b)), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
