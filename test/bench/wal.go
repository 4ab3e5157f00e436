package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
)

// walTasks is the chain whose store writes the WAL row counts.
const walTasks = 1000

// walBefore is a second kiln binary (the build before a change) whose WAL
// writes the row sets beside this one's, on the same chain in the same run.
var walBefore = flag.String("store-before", "", "a kiln binary to compare the WAL row with (the build before a change); none: this one alone")

// walFrame is what one page costs the WAL: SQLite's 4 KiB page and the
// frame's 24-byte header.
const walFrame = 4096 + 24

// walRow counts the bytes the engine writes to SQLite's WAL per task of a
// chain of walTasks true tasks, and the frames (pages) they hold: every
// write to the -wal file, read from strace. A frame is a page a commit
// changed, so frames per task is what a round's statements dirty.
func (b *bench) walRow() row {
	name := fmt.Sprintf("store: WAL bytes (frames) per task, chain of %d", walTasks)
	if _, err := exec.LookPath("strace"); err != nil {
		return row{name: name, kiln: "strace is not installed (make deps)", target: "fewer than before"}
	}
	now := b.walPerTask(b.kiln, "wal-now")
	r := row{name: name, kiln: walString(now), target: "fewer than before", met: true}
	if *walBefore != "" {
		before := b.walPerTask(*walBefore, "wal-before")
		r.raw = walString(before) + " before"
		r.ratio = fmt.Sprintf("%.2fx", now/before)
		r.met = now < before
	}
	return r
}

func walString(bytes float64) string {
	return fmt.Sprintf("%.0f B (%.1f frames)", bytes, bytes/walFrame)
}

// walPerTask runs the chain with bin on a home of its own (warmed by a
// one-task run: the schema written, the supervisor started) and returns
// the WAL bytes written per task.
func (b *bench) walPerTask(bin, name string) float64 {
	home := filepath.Join(b.dir, name)
	must(os.MkdirAll(home, 0o755))
	defer stopSupervisor(home)
	warm := exec.Command(bin, "--home", home, "run", "-q", b.write(name+"-warm", fanOut(1)))
	must(warm.Run())
	trace := filepath.Join(b.dir, name+".trace")
	file := b.write(name, chain(walTasks))
	e := exec.Command("strace", "-f", "-qq", "-y", "-e", "trace=pwrite64,write", "-o", trace,
		bin, "--home", home, "run", "-q", "--cpus", "2", file)
	e.Stderr = os.Stderr
	must(e.Run())
	return float64(walBytes(trace)) / walTasks
}

var walWrite = regexp.MustCompile(`^\d+\s+p?write(64)?\(\d+<[^>]*-wal>,.*= (\d+)$`)

// walBytes sums the bytes of the writes to a -wal file in an strace -y output.
func walBytes(path string) int {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	total := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if m := walWrite.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[2])
			total += n
		}
	}
	must(sc.Err())
	return total
}
