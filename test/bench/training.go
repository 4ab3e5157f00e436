package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// gangStart times submit -> every process of an n-process gang running,
// against starting n processes straight from Go.
func (b *bench) gangStart(n int) row {
	stamps := filepath.Join(b.dir, "gang-stamps")
	file := b.write("gang", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: gang}
spec:
  runtimeRef: {name: plain}
  trainer:
    numNodes: %d
    command: [sh, -c, 'date +%%s%%N >> %s']
    resourcesPerNode: {cpu: 100m}
`, n, stamps))
	b.kilnRun(file)
	submitted := b.lastRun().CreatedAt
	took := time.Unix(0, latest(stamps)).Sub(submitted)

	rawStamps := filepath.Join(b.dir, "raw-stamps")
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		cmd := exec.Command("sh", "-c", "date +%s%N >> "+rawStamps)
		must(cmd.Start())
		wg.Go(func() { _ = cmd.Wait() })
	}
	wg.Wait()
	raw := time.Unix(0, latest(rawStamps)).Sub(start)
	return row{
		name: fmt.Sprintf("submit to all %d processes of a gang running", n), kiln: took.Round(100 * time.Microsecond).String(),
		raw: raw.Round(100 * time.Microsecond).String(), ratio: ratio(took, raw), target: "(no target)", met: true,
	}
}

// latest returns the largest nanosecond timestamp in a file of them.
func latest(path string) int64 {
	b, err := os.ReadFile(path)
	must(err)
	var most int64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseInt(f, 10, 64)
		must(err)
		most = max(most, v)
	}
	return most
}

// ddp compares the DDP example under kiln with the same four processes
// started by a shell script (medians of 3, alternating).
func (b *bench) ddp(root string) row {
	env := append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH"))
	dir := filepath.Join(root, "examples", "training")
	script := b.write("ddp-script", `#!/bin/sh
# The DDP example's four processes without kiln: 2 nodes x 2 on this machine.
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$1 WORLD_SIZE=4 KILN_OUTPUTS=$2
for rank in 0 1 2 3; do
  RANK=$rank LOCAL_RANK=$((rank % 2)) python3 ddp.py > /dev/null &
done
wait
`)
	var kilnTimes, shellTimes []time.Duration
	for i := range 3 {
		start := time.Now()
		cmd := exec.Command(b.kiln, "--home", b.home, "run", "-q", "--cpus", fmt.Sprint(b.cpus), filepath.Join(dir, "torch-ddp.yaml"))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kiln run torch-ddp.yaml: %v\n%s", err, out)
			os.Exit(2)
		}
		kilnTimes = append(kilnTimes, time.Since(start))

		outDir := filepath.Join(b.dir, fmt.Sprint("ddp-out-", i))
		must(os.MkdirAll(outDir, 0o755))
		sh := exec.Command("sh", script, fmt.Sprint(29600+i), outDir)
		sh.Dir, sh.Env = dir, env
		start = time.Now()
		if out, err := sh.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "shell DDP: %v\n%s", err, out)
			os.Exit(2)
		}
		shellTimes = append(shellTimes, time.Since(start))
	}
	k, s := median(kilnTimes), median(shellTimes)
	over := float64(k)/float64(s) - 1
	return row{
		name: "DDP example (2 nodes x 2 processes), whole kiln run", kiln: k.Round(time.Millisecond).String(),
		raw: s.Round(time.Millisecond).String() + " (shell script)", ratio: ratio(k, s),
		extra: fmt.Sprintf("%+.1f%%", 100*over), target: "within 5%", met: over <= 0.05,
	}
}
