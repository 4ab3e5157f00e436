package local

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
)

// heapWatch discards what is written, noting the heap's peak every MiB.
type heapWatch struct {
	n, next int
	peak    uint64
}

func (h *heapWatch) Write(b []byte) (int, error) {
	h.n += len(b)
	if h.n >= h.next {
		h.next += 1 << 20
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(b), nil
}

// writeTimedLog writes log name in dir, lines lines of size bytes, and
// its time index, a record per 64 lines, from t0 on, step apart.
func writeTimedLog(t *testing.T, dir, name string, lines, size int, t0 time.Time, step time.Duration) int64 {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	idx, err := os.Create(filepath.Join(dir, name+timesSuffix))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	lw, iw := bufio.NewWriter(logf), bufio.NewWriter(idx)
	line := make([]byte, size)
	for i := range line {
		line[i] = 'x'
	}
	line[size-1] = '\n'
	var off int64
	for i := range lines {
		if i%64 == 0 {
			var rec [timeRecordSize]byte
			binary.LittleEndian.PutUint64(rec[:8], uint64(off))
			binary.LittleEndian.PutUint64(rec[8:], uint64(t0.Add(time.Duration(i)*step).UnixNano()))
			_, _ = iw.Write(rec[:])
		}
		_, _ = lw.Write(line)
		off += int64(size)
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := iw.Flush(); err != nil {
		t.Fatal(err)
	}
	return off
}

// TestBigLogsAreNotHeld serves an attempt whose stdout and stderr hold 96
// MiB between them: every byte comes through, while the heap stays far
// below the logs' size.
func TestBigLogsAreNotHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 96 MiB")
	}
	home := t.TempDir()
	id := mustID(t, "r/big/1")
	dir := AttemptDir(home, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	total := writeTimedLog(t, dir, "stdout", 64<<10, 1<<10, t0, time.Millisecond)
	total += writeTimedLog(t, dir, "stderr", 32<<10, 1<<10, t0.Add(time.Microsecond), 2*time.Millisecond)
	if err := os.WriteFile(filepath.Join(dir, "status.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var w heapWatch
	b := New(Config{Home: home})
	defer b.Close()
	if err := b.Logs(t.Context(), id, backend.LogOptions{Timestamps: true}, &w); err != nil {
		t.Fatal(err)
	}
	stamps := int64(len(timestampLayout)-len("Z07:00")+1+1) * int64(96<<10) // "...Z " before each line
	if int64(w.n) != total+stamps {
		t.Errorf("served %d bytes, want %d", w.n, total+stamps)
	}
	if w.peak > 32<<20 {
		t.Errorf("the heap reached %d MiB serving %d MiB of logs", w.peak>>20, total>>20)
	}
	t.Logf("served %d MiB of logs; the heap's peak: %d MiB", total>>20, w.peak>>20)
}
