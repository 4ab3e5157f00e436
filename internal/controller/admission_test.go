package controller

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"kiln.dev/kiln/internal/resource"
)

func TestAdmitsBefore(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		in   []readyItem
		want []int
	}{
		"first come, first served": {
			in:   []readyItem{{node: 2, seq: 3}, {node: 0, seq: 1}, {node: 1, seq: 2}},
			want: []int{0, 1, 2},
		},
		"a higher priority goes first, inside one run too": {
			in:   []readyItem{{node: 0, seq: 1}, {node: 1, seq: 2, priority: 5}, {node: 2, seq: 3, priority: -1}},
			want: []int{1, 0, 2},
		},
		"a due retry goes ahead of its equals": {
			in:   []readyItem{{node: 0, seq: 1}, {node: 1, seq: -1}, {node: 2, seq: 2, priority: 1}},
			want: []int{2, 1, 0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			items := slices.Clone(tc.in)
			slices.SortFunc(items, func(a, b readyItem) int {
				if admitsBefore(a, b) {
					return -1
				}
				if admitsBefore(b, a) {
					return 1
				}
				return 0
			})
			var got []int
			for _, it := range items {
				got = append(got, it.node)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("order = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWaitReason(t *testing.T) {
	t.Parallel()

	need := resource.Request{MilliCPU: 2000}
	cases := map[string]struct {
		a    resource.Admission
		want string
	}{
		"no room says what it needs and what is free": {
			a: resource.Admission{Free: resource.Request{MilliCPU: 500}}, want: "needs cpu 2, memory 0, gpu 0; free when it last asked cpu 500m",
		},
		"outranked says so": {a: resource.Admission{Outranked: true}, want: "behind a task of higher priority than 3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := waitReason(tc.a, need, 3); !strings.Contains(got, tc.want) {
				t.Errorf("waitReason = %q, want it to say %q", got, tc.want)
			}
		})
	}
}

func TestWaitTextsShareOneTextForTheSameWait(t *testing.T) {
	t.Parallel()
	var w waitTexts
	need := resource.Request{MilliCPU: 1000}
	free := resource.Admission{Free: resource.Request{MilliCPU: 500}}
	first, second := w.text(free, need, 0), w.text(free, need, 7)
	if first != second || unsafe.StringData(first) != unsafe.StringData(second) {
		t.Errorf("two nodes waiting for the same room got %q and %q, want one shared text", first, second)
	}
	if first != waitReason(free, need, 0) {
		t.Errorf("text %q, want waitReason's %q", first, waitReason(free, need, 0))
	}
	outranked := resource.Admission{Outranked: true}
	if a, b := w.text(outranked, need, 1), w.text(outranked, need, 2); a == b || a != waitReason(outranked, need, 1) {
		t.Errorf("outranked at priorities 1 and 2: %q and %q, want each its own priority", a, b)
	}
	for i := range 2 * maxWaitTexts {
		w.text(free, resource.Request{MilliCPU: int64(i)}, 0)
	}
	if len(w) > maxWaitTexts {
		t.Errorf("%d texts kept, want at most %d", len(w), maxWaitTexts)
	}
}
