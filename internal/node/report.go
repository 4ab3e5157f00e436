package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const (
	// ProgressFile is where, in its attempt's output directory, a
	// task reports its progress; its processes find the path in
	// $KILN_PROGRESS. A dot hides it among the outputs.
	ProgressFile = ".kiln-progress.json"
	// ProgressEnv names the variable that holds the file's path.
	ProgressEnv = "KILN_PROGRESS"
	// maxMetrics, maxMetricText: Kubeflow Trainer's bounds on a report's
	// metrics; more are dropped, longer names and values cut.
	maxMetrics    = 256
	maxMetricText = 64
)

// ProgressVar is the variable that tells attempt a's processes where to
// report their progress: KILN_PROGRESS=<its output directory>/ProgressFile.
func ProgressVar(a *Attempt) (string, error) {
	outputs, err := a.Inputs.Expand("{{outputs.dir}}")
	if err != nil {
		return "", err
	}
	return ProgressEnv + "=" + filepath.Join(outputs, ProgressFile), nil
}

// ReportProgress sets ns's reported progress from a progress file's
// content, read at now, and reports whether that changed anything: data
// is a JSON object in the shape
// of Kubeflow Trainer's trainerStatus,
//
//	{"progressPercentage": 40, "estimatedRemainingSeconds": 120,
//	 "metrics": [{"name": "loss", "value": "0.31"}]}
//
// every field optional; metrics may also be an object of names to values.
// The body of Trainer's status update request, {"trainerStatus": {...}},
// is read the same.
// A report that does not parse, or holds a percentage outside 0 to 100 or
// a negative estimate, is ignored (a file caught half-written, say).
func ReportProgress(ns *apiv1.NodeStatus, data []byte, now time.Time) bool {
	ts, err := ParseProgress(data)
	if err != nil || sameReport(ns.TrainerStatus, ts) {
		return false
	}
	ts.LastUpdatedTime = now
	ns.TrainerStatus = ts
	return true
}

// progressReport is the file's content as written.
type progressReport struct {
	ProgressPercentage        *float64        `json:"progressPercentage"`
	EstimatedRemainingSeconds *float64        `json:"estimatedRemainingSeconds"`
	Metrics                   json.RawMessage `json:"metrics"`
}

// ParseProgress reads a progress report (see Handler.Progress).
func ParseProgress(data []byte) (*apiv1.TrainerStatus, error) {
	var wrapped struct {
		TrainerStatus *progressReport `json:"trainerStatus"`
	}
	var r progressReport
	if err := json.Unmarshal(data, &wrapped); err != nil {
		return nil, fmt.Errorf("reading the progress report: %w", err)
	}
	if wrapped.TrainerStatus != nil {
		// The body of Trainer's status update request, as its SDK sends it.
		r = *wrapped.TrainerStatus
	} else if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reading the progress report: %w", err)
	}
	ts := &apiv1.TrainerStatus{}
	if p := r.ProgressPercentage; p != nil {
		if *p < 0 || *p > 100 {
			return nil, fmt.Errorf("progressPercentage %v is not between 0 and 100", *p)
		}
		ts.ProgressPercentage = int32Of(*p)
	}
	if s := r.EstimatedRemainingSeconds; s != nil {
		if *s < 0 || *s > math.MaxInt32 {
			return nil, fmt.Errorf("estimatedRemainingSeconds %v is negative or too large", *s)
		}
		ts.EstimatedRemainingSeconds = int32Of(*s)
	}
	metrics, err := parseMetrics(r.Metrics)
	if err != nil {
		return nil, err
	}
	ts.Metrics = metrics
	return ts, nil
}

func int32Of(f float64) *int32 {
	v := int32(f)
	return &v
}

// parseMetrics reads metrics as Trainer lists them, [{"name", "value"}],
// or as an object of names to values, in name order.
func parseMetrics(raw json.RawMessage) ([]apiv1.Metric, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var out []apiv1.Metric
	if raw[0] == '[' {
		var list []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("reading the metrics: %w", err)
		}
		for _, m := range list {
			out = appendMetric(out, m.Name, m.Value)
		}
		return out, nil
	}
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byName); err != nil {
		return nil, errors.New("metrics is neither a list of {name, value} nor an object of names to values")
	}
	names := make([]string, 0, len(byName))
	for k := range byName {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = appendMetric(out, k, byName[k])
	}
	return out, nil
}

// appendMetric adds a metric, its value as text (a JSON string unquoted,
// anything else as written), unless it has no name or the list is full.
func appendMetric(out []apiv1.Metric, name string, value json.RawMessage) []apiv1.Metric {
	if name == "" || len(out) >= maxMetrics {
		return out
	}
	text := strings.TrimSpace(string(value))
	var s string
	if json.Unmarshal(value, &s) == nil {
		text = s
	}
	return append(out, apiv1.Metric{Name: cut(name), Value: cut(text)})
}

func cut(s string) string {
	if len(s) > maxMetricText {
		return s[:maxMetricText]
	}
	return s
}

// sameReport reports whether b says what a says, whenever each was read.
func sameReport(a, b *apiv1.TrainerStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return eqInt(a.ProgressPercentage, b.ProgressPercentage) &&
		eqInt(a.EstimatedRemainingSeconds, b.EstimatedRemainingSeconds) && slices.Equal(a.Metrics, b.Metrics)
}

func eqInt(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
