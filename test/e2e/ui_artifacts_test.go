package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestWebUIDownloadsATasksArtifacts: on a server whose artifacts go to
// S3 (the real server of hack/s3-up.sh), a task's panel lists its stored
// artifacts with their sizes, as the API records them, and its Download
// link saves the artifact's bytes, fetched with the browser's token; the
// task that read them shows their paths as its inputs.
func TestWebUIDownloadsATasksArtifacts(t *testing.T) {
	t.Parallel()
	_, base, admin := serveWithS3(t)
	run := postRun(t, base, admin, artifactsWorkflow)
	got := waitAPIRun(t, base, admin, run.ID, "the run to succeed", func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseSucceeded })
	stored := map[string]apiv1.CachedArtifact{}
	for _, a := range nodeOf(t, &got, "make").Artifacts {
		stored[a.Name] = a
	}

	ctx := browser(t)
	downloads := t.TempDir()
	var rows []map[string]string
	var inputs string
	uiSteps(ctx, t,
		cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(downloads),
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)+"?node=make"),
		waitJS(`document.querySelectorAll("#io-artifacts tr[data-artifact]").length === 2`),
		chromedp.Evaluate(`[...document.querySelectorAll("#io-artifacts tr[data-artifact]")].map((r) =>
			({ name: r.dataset.artifact, size: r.dataset.size, text: r.innerText }))`, &rows),
		viewShot(t, "kiln-ui-artifacts.png"),
		chromedp.Click(`#io-artifacts tr[data-artifact="model"] a.download`),
		chromedp.ActionFunc(func(context.Context) error {
			waitFor(t, "the model to be downloaded", func() bool {
				b, err := os.ReadFile(filepath.Join(downloads, "model.bin"))
				return err == nil && string(b) == "weights\n"
			})
			return nil
		}),
		chromedp.Click(`#io-artifacts tr[data-artifact="bin"] a.download`),
		chromedp.ActionFunc(func(context.Context) error {
			waitFor(t, "the directory to be downloaded as a tar", func() bool {
				b, err := os.ReadFile(filepath.Join(downloads, "bin.tar"))
				return err == nil && strings.Contains(string(b), "echo tool")
			})
			return nil
		}),
		chromedp.Click(`g.node[data-name="use"] rect`),
		waitJS(`document.querySelector('#panel[data-node="use"] #io-inputs') !== null`),
		chromedp.Text(`#panel #io-inputs`, &inputs),
	)
	if len(rows) != 2 {
		t.Fatalf("the panel lists artifacts %v, want model and bin", rows)
	}
	for _, r := range rows {
		a := stored[r["name"]]
		if r["size"] != fmt.Sprint(a.Size) || a.Size == 0 {
			t.Errorf("the panel shows artifact %s of %s bytes, the API records %d", r["name"], r["size"], a.Size)
		}
	}
	if !strings.Contains(rows[0]["text"]+rows[1]["text"], "8 B") || !strings.Contains(rows[0]["text"]+rows[1]["text"], "(1 file)") {
		t.Errorf("the artifacts' rows read %v; want the model's 8 B and the directory's 1 file", rows)
	}
	use := nodeOf(t, &got, "use").Inputs
	if path := use["tasks.make.outputs.artifacts.model"]; !strings.HasSuffix(path, "model.bin") || !strings.Contains(inputs, path) {
		t.Errorf("use's inputs read %q in its panel, %v in the API; want the model's path", inputs, use)
	}
}
