package job

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAttemptIDRoundTrips(t *testing.T) {
	t.Parallel()

	id := AttemptID{Run: "train-x1y2z", Node: "prepare", Number: 12}
	if got := id.String(); got != "train-x1y2z/prepare/12" {
		t.Fatalf("String() = %q", got)
	}
	back, err := ParseAttemptID(id.String())
	if err != nil || back != id {
		t.Fatalf("ParseAttemptID(%q) = %+v, %v; want %+v", id.String(), back, err, id)
	}
	b, err := json.Marshal(map[string]AttemptID{"id": id})
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]AttemptID
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(id, decoded["id"]); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

func TestParseAttemptIDRejectsMalformedIDs(t *testing.T) {
	t.Parallel()

	for name, s := range map[string]string{
		"too few parts":     "run/1",
		"too many parts":    "run/a/b/1",
		"empty run":         "/a/1",
		"empty node":        "run//1",
		"number zero":       "run/a/0",
		"number not a word": "run/a/one",
		"leading zero":      "run/a/01",
		"negative":          "run/a/-1",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if id, err := ParseAttemptID(s); err == nil {
				t.Errorf("ParseAttemptID(%q) = %+v, want an error", s, id)
			}
		})
	}
}
