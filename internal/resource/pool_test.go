package resource

import "testing"

func TestPoolQueuesWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	p := NewPool(Request{MilliCPU: 2000, Memory: 1 << 30})
	one := Request{MilliCPU: 1000}
	for range 2 {
		if !p.TryAcquire(one) {
			t.Fatal("two one-CPU requests must fit in two CPUs")
		}
	}
	if p.TryAcquire(one) {
		t.Fatal("a third one-CPU request fit in a full pool")
	}
	p.Release(one)
	if !p.TryAcquire(one) {
		t.Fatal("a request did not fit after a release")
	}
	if p.TryAcquire(Request{Memory: 2 << 30}) {
		t.Fatal("a request larger than the memory fit")
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	if got, err := ParseCPU("500m"); err != nil || got != 500 {
		t.Errorf("ParseCPU(500m) = %d, %v; want 500", got, err)
	}
	if got, err := ParseBytes("2Gi"); err != nil || got != 2<<30 {
		t.Errorf("ParseBytes(2Gi) = %d, %v; want %d", got, err, 2<<30)
	}
	for _, bad := range []string{"1.5", "-1", "x"} {
		if _, err := ParseCount(bad); err == nil {
			t.Errorf("ParseCount(%q) succeeded, want error", bad)
		}
	}
}
