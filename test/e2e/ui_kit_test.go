package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// uiSteps drives the page through steps, failing the test with the
// number of the step that failed.
func uiSteps(ctx context.Context, t *testing.T, steps ...chromedp.Action) {
	t.Helper()
	for i, s := range steps {
		if err := chromedp.Run(ctx, s); err != nil {
			t.Fatalf("driving the UI, step %d of %d: %v", i+1, len(steps), err)
		}
	}
}

// waitJS waits up to a minute for script to be true in the page.
func waitJS(script string) chromedp.Action {
	return chromedp.Poll(script, nil, chromedp.WithPollingTimeout(60*time.Second))
}

// shot saves a screenshot of the whole page as name (see saveShot).
func shot(t *testing.T, name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var png []byte
		if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
			return err
		}
		saveShot(t, name, png)
		return nil
	})
}

// viewShot saves a screenshot of what the window shows as name: fixed
// elements where the user sees them (a full page's shot moves them).
func viewShot(t *testing.T, name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var png []byte
		if err := chromedp.CaptureScreenshot(&png).Do(ctx); err != nil {
			return err
		}
		saveShot(t, name, png)
		return nil
	})
}

// apiGetJSON reads path from the API with token into v, returning the status.
func apiGetJSON(t *testing.T, base, token, path string, v any) int {
	t.Helper()
	code, body := apiGet(t, base, token, path)
	if code == http.StatusOK && v != nil {
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return code
}

// apiRun is run id as GET /api/v1/runs/{id} answers, and the status.
func apiRun(t *testing.T, base, token string, id apiv1.RunID) (apiv1.Run, int) {
	t.Helper()
	var run apiv1.Run
	code := apiGetJSON(t, base, token, "/api/v1/runs/"+string(id), &run)
	return run, code
}

// waitAPIRun waits until run id, as the API answers, satisfies ok.
func waitAPIRun(t *testing.T, base, token string, id apiv1.RunID, what string, ok func(apiv1.Run) bool) apiv1.Run {
	t.Helper()
	var run apiv1.Run
	waitFor(t, what, func() bool {
		var code int
		run, code = apiRun(t, base, token, id)
		return code == http.StatusOK && ok(run)
	})
	return run
}

// pageRun is the run whose page the browser shows, from its address.
func pageRun(ctx context.Context) (apiv1.RunID, error) {
	var hash string
	if err := chromedp.Evaluate(`decodeURIComponent(location.hash)`, &hash).Do(ctx); err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(hash, "#/runs/"), "?")
	return apiv1.RunID(id), nil
}

// viewerToken makes a viewer's token for project default.
func viewerToken(t *testing.T, home string) string {
	t.Helper()
	return strings.TrimSpace(kiln(t, home, "token", "create", "reader", "--role", "viewer", "--project", "default").stdout)
}

// clearField empties the form field sel (chromedp.SetValue cannot set "").
func clearField(sel string) chromedp.Action {
	return chromedp.Evaluate(`document.querySelector("`+sel+`").value = ""`, nil)
}
