package local

import (
	"fmt"
	"testing"
)

func TestExitsKeepTheLatestInOrder(t *testing.T) {
	s := NewSupervisor(t.TempDir())
	n := 2*maxExits + 5
	s.mu.Lock()
	for i := range n {
		s.publish(fmt.Sprintf("r/t/%d", i+1), statusRecord{ExitCode: i})
	}
	s.mu.Unlock()
	if len(s.exits) < maxExits || len(s.exits) >= 2*maxExits {
		t.Errorf("%d exits kept, want between %d and %d", len(s.exits), maxExits, 2*maxExits)
	}
	var r ExitsReply
	if err := s.waitExits("sess", ExitsArgs{After: uint64(n - 3)}, &r); err != nil {
		t.Fatal(err)
	}
	if r.Reset || r.Seq != uint64(n) || len(r.Exits) != 3 || r.Exits[0].ID != fmt.Sprintf("r/t/%d", n-2) || r.Exits[2].Status.ExitCode != n-1 {
		t.Errorf("the last three exits read as %+v", r)
	}
	r = ExitsReply{}
	if err := s.waitExits("sess", ExitsArgs{After: 1}, &r); err != nil || !r.Reset {
		t.Errorf("a watcher behind the kept exits got %+v (%v), want a reset", r, err)
	}
}
