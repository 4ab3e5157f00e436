package slurm

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"kiln.dev/kiln/internal/job"
)

// The attempt's directory holds, besides the task's own files:
const (
	specFile   = "spec.json" // the spec, for Watch and adopting backends
	batchFile  = "job.sh"    // the batch script
	batchLog   = "batch.out" // what the batch script itself wrote
	claimFile  = "claim"     // the ID of the one job that runs the attempt
	statusFile = "status"    // how each process ended, a line each
	logsDir    = "logs"      // <i>.out and <i>.err of process i
	hostToken  = "@KILN_SLURM_HOST_%d@"
)

// quote quotes s for a POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// procFile is the script that starts process i, host tokens unresolved.
func procFile(i int) string { return "proc-" + strconv.Itoa(i) + ".sh" }

// passThrough are the variables of the srun step a process keeps beside
// its own environment (which wins): where it runs in the allocation, and
// the devices Slurm bound it to (GRES).
var passThrough = []string{
	"SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURMD_NODENAME", "SLURM_NODEID",
	"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
}

// procScript starts process i of spec on its node: in its working
// directory, with its environment, KILN_OUTPUTS and the step's
// passThrough variables. A command that is not there is recorded, so
// that Observe can say so.
func procScript(dir string, spec *job.Spec, i int) string {
	p := spec.Processes[i]
	wd := spec.WorkingDir
	if wd == "" {
		wd = dir
	} else if !filepath.IsAbs(wd) {
		wd = filepath.Join(dir, wd)
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&b, "cd %s || exit 126\n", quote(wd))
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range p.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	if len(p.Command) > 0 {
		fmt.Fprintf(&b, "( PATH=%s; command -v %s ) > /dev/null 2>&1 || { echo notfound %d >> %s; echo %s >&2; exit 127; }\n",
			quote(path), quote(p.Command[0]), i, quote(filepath.Join(dir, statusFile)),
			quote("kiln: "+p.Command[0]+": command not found"))
	}
	b.WriteString("exec env -i")
	for _, name := range passThrough {
		fmt.Fprintf(&b, ` ${%s+"%s=$%s"}`, name, name, name)
	}
	for _, kv := range p.Env {
		if !strings.HasPrefix(kv, "KILN_OUTPUTS=") {
			b.WriteString(" " + quote(kv))
		}
	}
	b.WriteString(" " + quote("KILN_OUTPUTS="+filepath.Join(dir, outputsDir)))
	for _, a := range slices.Concat(p.Command, p.Args) {
		b.WriteString(" " + quote(a))
	}
	b.WriteString("\n")
	return b.String()
}

// hostCount is how many nodes spec's processes run on.
func hostCount(spec *job.Spec) int {
	n := 1
	for _, p := range spec.Processes {
		n = max(n, p.Host+1)
	}
	return n
}

// namedHosts is how many hosts spec's text names by their tokens: more
// than its processes run on when one process reaches the others itself
// (an MPI launcher's hostfile).
func namedHosts(spec *job.Spec) int {
	n := 0
	seen := func(text string) {
		for _, m := range hostTokenRE.FindAllStringSubmatch(text, -1) {
			if i, err := strconv.Atoi(m[1]); err == nil {
				n = max(n, i+1)
			}
		}
	}
	for _, p := range spec.Processes {
		for _, arg := range p.Command {
			seen(arg)
		}
		for _, e := range p.Env {
			seen(e)
		}
	}
	for _, text := range spec.Files {
		seen(text)
	}
	return n
}

// hostTokenRE finds the host tokens in a spec's text.
var hostTokenRE = regexp.MustCompile(`@KILN_SLURM_HOST_(\d+)@`)

// batchScript is the job's script. Its job runs the attempt unless
// another job of the attempt claimed it first; it resolves the nodes'
// addresses (host tokens in the process scripts and files: the master's
// address is the allocation's first node), starts every process with
// srun on its node, stops the gang once its end is decided (job.Decide's
// rule, which Observe applies again to what it records) and records each
// process's end in the status file.
func batchScript(dir string, spec *job.Spec) string {
	leader := -1
	hosts := make([]string, len(spec.Processes))
	for i, p := range spec.Processes {
		hosts[i] = strconv.Itoa(p.Host)
		if spec.Leader != "" && p.Name == spec.Leader {
			leader = i
		}
	}
	files := make([]string, 0, len(spec.Files))
	for name := range spec.Files {
		files = append(files, quote(name))
	}
	slices.Sort(files)
	r := strings.NewReplacer(
		"@DIR@", quote(dir), "@ID@", spec.ID.String(), "@FILES@", strings.Join(files, " "),
		"@LEADER@", strconv.Itoa(leader), "@MINHOSTS@", strconv.Itoa(spec.MinHosts),
		"@HOSTS@", strings.Join(hosts, " "), "@NHOSTS@", strconv.Itoa(hostCount(spec)),
		"@TOKEN@", strings.ReplaceAll(hostToken, "%d", "$i"))
	return r.Replace(batchTemplate)
}

const batchTemplate = `#!/bin/bash
# kiln attempt @ID@, written by kiln's Slurm backend.
cd @DIR@ || exit 1
# One job runs the attempt: another submitted for it leaves at once.
if ! (set -C; echo "$SLURM_JOB_ID" > claim) 2> /dev/null; then exit 0; fi
now() { date +%s%N; }
record() { echo "$*" >> status; }
mapfile -t nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
subst=()
for i in "${!nodes[@]}"; do
  addr=$(scontrol show node -o "${nodes[$i]}" | sed -n 's/.* NodeAddr=\([^ ]*\).*/\1/p')
  subst+=(-e "s|@TOKEN@|${addr:-${nodes[$i]}}|g")
done
for f in @FILES@; do sed -i "${subst[@]}" "$f"; done
leader=@LEADER@
minhosts=@MINHOSTS@
nhosts=@NHOSTS@
hosts=(@HOSTS@)
declare -A pids failed
stopping=0
# stop ends the gang: its processes still running count as stopped.
stop() {
  stopping=1
  for p in "${!pids[@]}"; do kill -TERM "$p" 2> /dev/null; done
}
# Slurm's time limit or scancel --full signals the processes itself:
# they are stopped.
trap 'stopping=1; record abort "$(now)"' TERM INT
record start "$(now)"
for i in "${!hosts[@]}"; do
  sed "${subst[@]}" "proc-$i.sh" > "proc-$i.run" && chmod 700 "proc-$i.run"
  srun --overlap --nodes=1 --ntasks=1 --relative="${hosts[$i]}" --kill-on-bad-exit=0 \
    --output="logs/$i.out" --error="logs/$i.err" "$PWD/proc-$i.run" < /dev/null &
  pids[$!]=$i
done
left=${#hosts[@]}
while [ "$left" -gt 0 ]; do
  who=
  wait -n -p who "${!pids[@]}"
  rc=$?
  [ -n "$who" ] || continue
  i=${pids[$who]}
  unset "pids[$who]"
  left=$((left - 1))
  # kiln's Abort records itself before it signals the processes.
  [ "$stopping" = 1 ] || ! grep -q '^abort' status || stopping=1
  record exit "$i" "$rc" "$stopping" "$(now)"
  [ "$stopping" = 1 ] && continue
  if [ "$i" = "$leader" ]; then stop; continue; fi
  [ "$rc" = 0 ] && continue
  failed[${hosts[$i]}]=1
  # An elastic gang outlives a failure off host 0 while enough hosts are left.
  if [ "$minhosts" -gt 0 ] && [ "${hosts[$i]}" != 0 ] && [ $((nhosts - ${#failed[@]})) -ge "$minhosts" ]; then continue; fi
  stop
done
record done "$(now)"
`
