package leader

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// TestTakeoverAndLoss runs two electors on one real store: the first
// wins, the second follows; once the second may take over (the first is
// said to be dead), it wins the next term and the first is told it lost,
// to whom.
func TestTakeoverAndLoss(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var firstDead atomic.Bool
	a := New(Config{Store: st, Holder: "a", Address: "http://a", Retry: 20 * time.Millisecond})
	b := New(Config{
		Store: st, Holder: "b", Address: "http://b", Retry: 20 * time.Millisecond,
		IsDead: func(h string) bool { return h == "a" && firstDead.Load() },
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	aWon, bWon := make(chan int64, 1), make(chan int64, 1)
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(ctx, func(term int64, _ store.Leader) { aWon <- term }) }()
	if term := <-aWon; term != 1 {
		t.Fatalf("a won term %d, want 1", term)
	}
	bDone := make(chan error, 1)
	go func() {
		bDone <- b.Run(ctx, func(term int64, before store.Leader) {
			if before.Holder != "a" {
				t.Errorf("b won after %+v, want after a", before)
			}
			bWon <- term
		})
	}()
	for {
		if l, leading := b.Leader(); l.Holder == "a" && !leading {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("b never saw a lead")
		case <-time.After(10 * time.Millisecond):
		}
	}
	firstDead.Store(true)
	if term := <-bWon; term != 2 {
		t.Fatalf("b won term %d, want 2", term)
	}
	var lost *LostError
	if err := <-aDone; !errors.As(err, &lost) || lost.Term != 1 || lost.To.Holder != "b" || lost.To.Term != 2 {
		t.Fatalf("a ended with %v, want it lost term 1 to b, term 2", err)
	}
	cancel()
	if err := <-bDone; err != nil {
		t.Fatalf("b ended with %v, want nil once its context ended", err)
	}
	if err := b.Resign(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	l, err := st.Leader(t.Context())
	if err != nil || l.Holder != "b" || l.Until.After(time.Now()) {
		t.Fatalf("after b resigned the lease is %+v, %v; want b's, ended", l, err)
	}
}
