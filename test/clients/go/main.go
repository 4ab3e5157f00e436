// Command submit is a client of kiln's HTTP API written against the Go
// client that oapi-codegen generates from the OpenAPI document into
// ./api (the e2e test TestGeneratedClients generates it, then runs this).
// It submits a Workflow and a TrainJob as typed values, reads each run
// back until it ends, submits a Workflow kiln refuses, and prints one JSON
// line for each: what the test checks against the server.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"kilnclients/api"
)

// result is what the client saw of one submission.
type result struct {
	Kind   string `json:"kind"`
	ID     string `json:"id,omitempty"`
	Name   string `json:"name,omitempty"`
	Phase  string `json:"phase,omitempty"`
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
}

func main() {
	server := flag.String("server", "", "the kiln server's URL")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, *server, os.Getenv("KILN_TOKEN")); err != nil {
		fmt.Fprintln(os.Stderr, "submit:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, server, token string) error {
	c, err := api.NewClientWithResponses(server, api.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		return err
	}
	var wf, job api.RunnableDocument
	if err := wf.FromWorkflowDocument(workflow("go-client-wf", []api.Task{{Name: "hello", Command: &[]string{"sh", "-c", "echo hello from go"}}})); err != nil {
		return err
	}
	if err := job.FromTrainJobDocument(trainJob("go-client-tj")); err != nil {
		return err
	}
	for _, doc := range []api.RunnableDocument{wf, job} {
		r, err := submitAndWait(ctx, c, doc)
		if err != nil {
			return err
		}
		emit(r)
	}
	var bad api.RunnableDocument
	if err := bad.FromWorkflowDocument(workflow("go-client-bad", []api.Task{})); err != nil {
		return err
	}
	resp, err := c.SubmitRunWithResponse(ctx, &api.SubmitRunParams{}, bad)
	if err != nil {
		return err
	}
	if resp.JSON400 == nil || len(resp.JSON400.Errors) == 0 {
		return fmt.Errorf("a workflow without tasks: %d %s, want 400 with errors", resp.StatusCode(), resp.Body)
	}
	emit(result{Kind: "refused", Status: resp.StatusCode(), Code: string(resp.JSON400.Errors[0].Code)})
	return nil
}

func workflow(name string, tasks []api.Task) api.WorkflowDocument {
	return api.WorkflowDocument{
		ApiVersion: api.WorkflowDocumentApiVersionKilnDevv1alpha1, Kind: api.WorkflowDocumentKindWorkflow,
		Metadata: api.ObjectMeta{Name: name}, Spec: api.WorkflowSpec{Tasks: tasks},
	}
}

func trainJob(name string) api.TrainJobDocument {
	nodes := 2
	return api.TrainJobDocument{
		ApiVersion: api.TrainJobDocumentApiVersionKilnDevv1alpha1, Kind: api.TrainJobDocumentKindTrainJob,
		Metadata: api.ObjectMeta{Name: name},
		Spec: api.TrainJobSpec{
			RuntimeRef: api.RuntimeRef{Name: "torch-distributed"},
			Trainer:    &api.Trainer{Command: &[]string{"true"}, NumNodes: &nodes},
		},
	}
}

// submitAndWait submits doc and reads its run back until it ends.
func submitAndWait(ctx context.Context, c *api.ClientWithResponses, doc api.RunnableDocument) (result, error) {
	sub, err := c.SubmitRunWithResponse(ctx, &api.SubmitRunParams{}, doc)
	if err != nil {
		return result{}, err
	}
	if sub.JSON201 == nil {
		return result{}, fmt.Errorf("submit: %d %s", sub.StatusCode(), sub.Body)
	}
	for {
		got, err := c.GetRunWithResponse(ctx, sub.JSON201.Id, &api.GetRunParams{})
		if err != nil {
			return result{}, err
		}
		if got.JSON200 == nil {
			return result{}, fmt.Errorf("get run %s: %d %s", sub.JSON201.Id, got.StatusCode(), got.Body)
		}
		run := got.JSON200
		switch run.Status.Phase {
		case api.RunStatusPhaseSucceeded, api.RunStatusPhaseFailed, api.RunStatusPhaseCancelled:
			return result{Kind: run.Kind, ID: run.Id, Name: run.Name, Phase: string(run.Status.Phase)}, nil
		}
		select {
		case <-ctx.Done():
			return result{}, fmt.Errorf("run %s is still %s: %w", run.Id, run.Status.Phase, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func emit(r result) {
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}
