package node

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func i32(v int32) *int32 { return &v }

func TestParseProgressReadsTrainersShapeAndAMetricsObject(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in   string
		want *apiv1.TrainerStatus
	}{
		"trainer's shape": {
			`{"progressPercentage": 40, "estimatedRemainingSeconds": 120, "metrics": [{"name": "loss", "value": "0.31"}]}`,
			&apiv1.TrainerStatus{ProgressPercentage: i32(40), EstimatedRemainingSeconds: i32(120), Metrics: []apiv1.Metric{{Name: "loss", Value: "0.31"}}},
		},
		"metrics as an object, in name order, numbers as written": {
			`{"progressPercentage": 12.7, "metrics": {"step": 30, "loss": 0.25, "phase": "warmup", "": 1}}`,
			&apiv1.TrainerStatus{ProgressPercentage: i32(12), Metrics: []apiv1.Metric{
				{Name: "loss", Value: "0.25"}, {Name: "phase", Value: "warmup"}, {Name: "step", Value: "30"},
			}},
		},
		"nothing known yet": {`{}`, &apiv1.TrainerStatus{}},
		"the body of trainer's status update request": {
			`{"trainerStatus": {"progressPercentage": 75, "estimatedRemainingSeconds": 30, "metrics": [{"name": "loss", "value": "0.1"}]}}`,
			&apiv1.TrainerStatus{ProgressPercentage: i32(75), EstimatedRemainingSeconds: i32(30), Metrics: []apiv1.Metric{{Name: "loss", Value: "0.1"}}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseProgress([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseProgress (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseProgressRefusesBadReports(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		``, `{"progressPercentage": 4`, `[1, 2]`, `{"progressPercentage": 140}`, `{"progressPercentage": -1}`,
		`{"estimatedRemainingSeconds": -5}`, `{"progressPercentage": "40"}`, `{"metrics": 3}`,
	} {
		if got, err := ParseProgress([]byte(in)); err == nil {
			t.Errorf("ParseProgress(%q) = %+v, want an error", in, got)
		}
	}
}
