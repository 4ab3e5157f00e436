package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// unitFile is kiln's systemd unit.
const unitFile = "../../deploy/systemd/kiln.service"

// unitTasks writes an output parameter and an artifact in a directory
// only its account may enter, and reads the parameter in a second task.
const unitTasks = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: unit}
spec:
  tasks:
  - name: make
    command: [sh, -c, 'echo 42 > $KILN_OUTPUTS/answer; mkdir $KILN_OUTPUTS/model; echo w > $KILN_OUTPUTS/model/w; chmod 700 $KILN_OUTPUTS/model']
    outputs:
      parameters: [{name: answer}]
      artifacts: [{name: model, path: model}]
  - name: use
    dependsOn: [make]
    command: [sh, -c, 'test "{{tasks.make.outputs.parameters.answer}}" = 42']
`

// TestSystemdUnitKeepsWhatTasksNeed runs kiln serve as the unit does, as
// root with only the unit's capability bounding set and no new
// privileges (setpriv plays systemd's part), with the unit's arguments:
// tasks run as their project's account, pass outputs on, are stopped
// when cancelled and are removed with their runs. systemd-analyze, where
// there is one, finds nothing wrong with the unit.
func TestSystemdUnitKeepsWhatTasksNeed(t *testing.T) {
	t.Parallel()
	unit := readUnit(t)
	verifyUnit(t)
	if os.Geteuid() != 0 {
		t.Skip("the unit runs kiln as root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv (util-linux) to drop capabilities as systemd does")
	}
	var caps []string
	for _, c := range strings.Fields(unit["CapabilityBoundingSet"]) {
		caps = append(caps, "+"+strings.ToLower(strings.TrimPrefix(c, "CAP_")))
	}
	wrap := []string{"setpriv", "--bounding-set", "-all," + strings.Join(caps, ",")}
	if unit["NoNewPrivileges"] == "yes" {
		wrap = append(wrap, "--no-new-privs")
	}
	_, args, ok := strings.Cut(unit["ExecStart"], " serve ")
	if !ok {
		t.Fatalf("the unit's ExecStart %q is not kiln serve", unit["ExecStart"])
	}
	home := newHome(t)
	base, admin, _ := startServeIn(t, wrap, home, nil, nil, strings.Fields(args)...)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)

	done := postRun(t, base, admin, unitTasks)
	waitServed(t, base, admin, done.ID, apiv1.PhaseSucceeded)
	marker := "kiln-unit-" + filepath.Base(filepath.Dir(home))
	slow := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: slow}
spec:
  tasks:
  - {name: wait, command: [sh, -c, 'sleep 300; echo `+marker+`']}
`)
	waitFor(t, "the slow task to start", func() bool { return processRuns(marker) })
	if r := kilnWithEnv(t, client, t.TempDir(), "cancel", string(slow.ID)); r.code != 0 {
		t.Fatalf("cancel: %s", r.stderr)
	}
	waitServed(t, base, admin, slow.ID, apiv1.PhaseCancelled)
	waitFor(t, "the cancelled task's processes to end", func() bool { return !processRuns(marker) })
	if r := kilnWithEnv(t, client, t.TempDir(), "delete", "run", string(done.ID), string(slow.ID)); r.code != 0 {
		t.Fatalf("delete: %s", r.stderr)
	}
	for _, id := range []apiv1.RunID{done.ID, slow.ID} {
		waitFor(t, "run "+string(id)+"'s directory to go", func() bool {
			_, err := os.Stat(filepath.Join(home, "runs", string(id)))
			return os.IsNotExist(err)
		})
	}
}

// readUnit returns the unit's settings (the last of each name).
func readUnit(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			out[k] = v
		}
	}
	return out
}

// verifyUnit runs systemd-analyze verify on the unit, its ExecStart
// pointed at the kiln under test, where systemd-analyze is installed.
func verifyUnit(t *testing.T) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("no systemd-analyze: the unit is not verified")
		return
	}
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := writeFile(t, t.TempDir(), "kiln.service", strings.ReplaceAll(string(b), "/usr/local/bin/kiln", kilnBin))
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// processRuns reports whether a process whose command line holds marker runs.
func processRuns(marker string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), marker) {
			return true
		}
	}
	return false
}
