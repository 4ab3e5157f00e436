package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// testChannel checks the federation channel's pieces and log: a message
// is readable once whole and until taken, its pieces are idempotent, a
// conflicting resend is refused, and an ended part takes no more.
func testChannel(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustCreate(t, s, NewRun("part", "me"))
	key := store.ChannelKey{Task: "train", Attempt: 1, Role: "arbiter", Party: "alice", PeerRole: "guest", Name: "w-1"}
	piece := func(i int, data string) store.ChannelChunk {
		return store.ChannelChunk{Key: key, Index: i, Chunks: 2, Size: 6, Digest: "sha256:ab", Data: []byte(data), At: t0.Add(time.Duration(i) * time.Second)}
	}
	if whole, err := s.PutChunk(ctx, "part", piece(1, "def")); err != nil || whole {
		t.Fatalf("second piece first = %v, %v; want not whole", whole, err)
	}
	if _, _, err := s.ReceivedChunk(ctx, "part", key, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a message not whole read = %v; want ErrNotFound", err)
	}
	if whole, err := s.PutChunk(ctx, "part", piece(1, "def")); err != nil || whole {
		t.Errorf("the same piece again = %v, %v; want not whole, no error", whole, err)
	}
	if whole, err := s.PutChunk(ctx, "part", piece(0, "abc")); err != nil || !whole {
		t.Fatalf("the last piece = %v, %v; want whole", whole, err)
	}
	m, data, err := s.ReceivedChunk(ctx, "part", key, 0)
	if err != nil || string(data) != "abc" || m.Size != 6 || m.Chunks != 2 || !m.At.Equal(t0) || m.Taken != nil {
		t.Errorf("piece 0 = %+v %q %v", m, data, err)
	}
	bad := piece(0, "abc")
	bad.Digest = "sha256:cd"
	if _, err := s.PutChunk(ctx, "part", bad); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a piece with another digest = %v; want ErrConflict", err)
	}
	if err := s.TakeMessage(ctx, "part", key, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.TakeMessage(ctx, "part", key, t0.Add(time.Hour)); err != nil {
		t.Errorf("taken again: %v", err)
	}
	if _, _, err := s.ReceivedChunk(ctx, "part", key, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a taken message read = %v; want ErrNotFound", err)
	}
	sent := apiv1.ChannelMessage{Direction: apiv1.ChannelSent, Task: "train", Attempt: 1, Role: "arbiter", Party: "bob", PeerRole: "host", Name: "avg-1", Size: 3, Digest: "sha256:ef", Chunks: 1, At: t0.Add(2 * time.Minute)}
	if err := s.LogMessage(ctx, "part", sent); err != nil {
		t.Fatal(err)
	}
	if err := s.LogMessage(ctx, "part", sent); err != nil {
		t.Errorf("the same message logged again: %v", err)
	}
	other := sent
	other.Digest = "sha256:00"
	if err := s.LogMessage(ctx, "part", other); !errors.Is(err, store.ErrConflict) {
		t.Errorf("another message of the same name = %v; want ErrConflict", err)
	}
	log, err := s.ChannelLog(ctx, "part")
	if err != nil {
		t.Fatal(err)
	}
	taken := t0.Add(time.Minute)
	want := []apiv1.ChannelMessage{
		{Direction: apiv1.ChannelReceived, Task: "train", Attempt: 1, Role: "arbiter", Party: "alice", PeerRole: "guest", Name: "w-1", Size: 6, Digest: "sha256:ab", Chunks: 2, At: t0, Taken: &taken},
		sent,
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	key.Name = "w-2"
	if _, err := s.PutChunk(ctx, "part", store.ChannelChunk{Key: key, Chunks: 2, Size: 6, Digest: "sha256:ab", Data: []byte("abc")}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DropEndedChannels(ctx); err != nil || n != 0 {
		t.Fatalf("dropped %d pieces of live parts (%v); want none", n, err)
	}
	finish(t, s, "part", apiv1.PhaseSucceeded)
	if n, err := s.DropEndedChannels(ctx); err != nil || n != 1 {
		t.Fatalf("dropped %d pieces of the ended part (%v); want its 1", n, err)
	}
	var pe *store.PhaseError
	if _, err := s.PutChunk(ctx, "part", piece(1, "def")); !errors.As(err, &pe) {
		t.Errorf("a piece for an ended part = %v; want a PhaseError", err)
	}
	if _, err := s.PutChunk(ctx, "nope", piece(1, "def")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a piece for no run = %v; want ErrNotFound", err)
	}
	if err := s.DeleteRun(ctx, "part"); err != nil {
		t.Fatal(err)
	}
	if log, err := s.ChannelLog(ctx, "part"); err != nil || len(log) != 0 {
		t.Errorf("log of a deleted run = %v, %v; want none", log, err)
	}
	testHeard(t, s)
}

// testHeard checks when each part's initiator was last heard from.
func testHeard(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustCreate(t, s, NewRun("live", "me"))
	mustCreate(t, s, NewRun("ended", "me"))
	for _, h := range []struct {
		id apiv1.RunID
		at time.Time
	}{{"live", t0.Add(time.Minute)}, {"live", t0}, {"ended", t0}} {
		if err := s.HeardFromInitiator(ctx, h.id, h.at); err != nil {
			t.Fatal(err)
		}
	}
	finish(t, s, "ended", apiv1.PhaseSucceeded)
	silent, err := s.SilentParts(ctx, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[apiv1.RunID]time.Time{"live": t0.Add(time.Minute)}, silent); diff != "" {
		t.Errorf("silent parts (-want +got):\n%s", diff)
	}
	if silent, err := s.SilentParts(ctx, t0.Add(time.Minute)); err != nil || len(silent) != 0 {
		t.Errorf("parts silent since before the last call = %v, %v; want none", silent, err)
	}
}
