package client_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
)

// A submission whose answer did not come, or that the server could not
// take now, is sent again with the same key, a new random one unless the
// caller gave one.
func TestSubmitRetriesWithOneKey(t *testing.T) {
	t.Parallel()
	for name, given := range map[string]string{"made": "", "given": "my-key"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var keys []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				keys = append(keys, r.Header.Get("Idempotency-Key"))
				n := len(keys)
				mu.Unlock()
				switch n {
				case 1: // the answer is lost
					conn, _, _ := http.NewResponseController(w).Hijack()
					conn.Close()
				case 2:
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = w.Write([]byte(`{"errors":[{"code":"KLN-4062","message":"late"}]}`))
				default:
					w.WriteHeader(http.StatusCreated)
					_, _ = w.Write([]byte(`{"id":"r1"}`))
				}
			}))
			t.Cleanup(srv.Close)
			run, err := client.New(srv.URL, "").Submit(t.Context(), apiv1.Submission{
				Files: []apiv1.SourceFile{{Name: "wf.yaml", Data: []byte("kind: Workflow")}}, IdempotencyKey: given,
			})
			if err != nil || run.ID != "r1" {
				t.Fatalf("Submit = %+v, %v; want run r1", run, err)
			}
			if len(keys) != 3 || keys[1] != keys[0] || keys[2] != keys[0] {
				t.Fatalf("keys sent %q, want one key three times", keys)
			}
			if given != "" && keys[0] != given || given == "" && !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(keys[0]) {
				t.Errorf("key %q, want %q or 32 random hex digits", keys[0], given)
			}
		})
	}
}

// A refusal that another try would not change is not sent again.
func TestSubmitDoesNotRetryRefusals(t *testing.T) {
	t.Parallel()
	tries := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries++
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"errors":[{"code":"KLN-4061","message":"reused"}]}`))
	}))
	t.Cleanup(srv.Close)
	_, err := client.New(srv.URL, "").Submit(t.Context(), apiv1.Submission{Files: []apiv1.SourceFile{{Name: "wf.yaml"}}})
	if err == nil || tries != 1 {
		t.Errorf("Submit = %v after %d tries; want KLN-4061 after one", err, tries)
	}
}
