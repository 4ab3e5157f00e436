package gate

import (
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestCheckGateInput(t *testing.T) {
	t.Parallel()

	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := since.Add(time.Minute)
	approve := &apiv1.GateStatus{Kind: "approve", WaitingSince: &since}
	signal := func(typ string) *apiv1.GateStatus {
		return &apiv1.GateStatus{Kind: "signal", Type: typ, WaitingSince: &since}
	}
	yes, no := true, false
	value := func(v string) apiv1.GateInput { return apiv1.GateInput{Value: &v} }
	long := strings.Repeat("x", MaxValueBytes)

	cases := map[string]struct {
		st       *apiv1.GateStatus
		in       apiv1.GateInput
		wantCode apiv1.Code // "" wants nil
		wantSays string
	}{
		"an approval to an approval gate":    {st: approve, in: apiv1.GateInput{Approve: &yes}},
		"a rejection to an approval gate":    {st: approve, in: apiv1.GateInput{Approve: &no}},
		"any text to a string signal":        {st: signal(""), in: value("hello, world")},
		"an empty string to a string gate":   {st: signal("string"), in: value("")},
		"a value of exactly the limit":       {st: signal("string"), in: value(long)},
		"a negative int":                     {st: signal("int"), in: value("-42")},
		"a float with an exponent":           {st: signal("float"), in: value("1e-3")},
		"a bool spelled as strconv does":     {st: signal("bool"), in: value("TRUE")},
		"a JSON object":                      {st: signal("json"), in: value(`{"lr": [0.1, 0.01]}`)},
		"a value to an approval gate":        {st: approve, in: value("yes"), wantCode: apiv1.CodeNotWaiting, wantSays: "not a value"},
		"an approval to a signal gate":       {st: signal("int"), in: apiv1.GateInput{Approve: &yes}, wantCode: apiv1.CodeNotWaiting, wantSays: "waits for a value of type int"},
		"an approval to a sleeping gate":     {st: &apiv1.GateStatus{Kind: "sleep", WaitingSince: &since, WakeAt: &at}, in: apiv1.GateInput{Approve: &yes}, wantCode: apiv1.CodeNotWaiting, wantSays: "sleeps until 2026-01-02T03:05:05Z"},
		"a word to an int gate":              {st: signal("int"), in: value("seven"), wantCode: apiv1.CodeNotWaiting, wantSays: `value "seven" is not an int`},
		"a fraction to an int gate":          {st: signal("int"), in: value("1.5"), wantCode: apiv1.CodeNotWaiting, wantSays: `"1.5" is not an int`},
		"an int past 64 bits":                {st: signal("int"), in: value("9223372036854775808"), wantCode: apiv1.CodeNotWaiting, wantSays: "is not an int"},
		"NaN to a float gate":                {st: signal("float"), in: value("NaN"), wantCode: apiv1.CodeNotWaiting, wantSays: `"NaN" is not a float`},
		"infinity to a float gate":           {st: signal("float"), in: value("+Inf"), wantCode: apiv1.CodeNotWaiting, wantSays: "is not a float"},
		"yes to a bool gate":                 {st: signal("bool"), in: value("yes"), wantCode: apiv1.CodeNotWaiting, wantSays: `"yes" is not a bool`},
		"broken JSON":                        {st: signal("json"), in: value(`{"lr": }`), wantCode: apiv1.CodeNotWaiting, wantSays: "is not json"},
		"a long bad value is quoted in part": {st: signal("int"), in: value(strings.Repeat("9", 63) + "x" + strings.Repeat("y", 500)), wantCode: apiv1.CodeNotWaiting, wantSays: `"` + strings.Repeat("9", 63) + `x"... is not an int`},
		"a value one byte over the limit":    {st: signal("string"), in: value(long + "x"), wantCode: apiv1.CodeOutOfRange, wantSays: "65537 bytes, over the 65536"},
		"a type no gate has":                 {st: signal("date"), in: value("today"), wantCode: apiv1.CodeNotWaiting, wantSays: `type "date"`},
		"no gate at all":                     {st: nil, in: apiv1.GateInput{Approve: &yes}, wantCode: apiv1.CodeNotWaiting, wantSays: "not a gate"},
		"a gate not waiting yet":             {st: &apiv1.GateStatus{Kind: "approve"}, in: apiv1.GateInput{Approve: &yes}, wantCode: apiv1.CodeNotWaiting, wantSays: "not started waiting"},
		"a gate decided already": {
			st:       &apiv1.GateStatus{Kind: "approve", WaitingSince: &since, Decision: "rejected", By: "ann", At: &at, Reason: "too risky"},
			in:       apiv1.GateInput{Approve: &yes},
			wantCode: apiv1.CodeNotWaiting, wantSays: `it was rejected by ann at 2026-01-02T03:05:05Z ("too risky")`,
		},
		"a gate signalled already": {
			st:       &apiv1.GateStatus{Kind: "signal", WaitingSince: &since, Decision: "signalled", Value: "42", By: "bob", At: &at},
			in:       value("43"),
			wantCode: apiv1.CodeNotWaiting, wantSays: `it was signalled "42" by bob at 2026-01-02T03:05:05Z`,
		},
		"both an approval and a value":    {st: approve, in: apiv1.GateInput{Approve: &yes, Value: &long}, wantCode: apiv1.CodeBadRequest, wantSays: "not both"},
		"neither an approval nor a value": {st: approve, in: apiv1.GateInput{Reason: "hm"}, wantCode: apiv1.CodeBadRequest, wantSays: "needs an approval or a value"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := CheckGateInput(tc.st, tc.in)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("CheckGateInput = %v, want nil", err)
				}
				return
			}
			if got := apiv1.CodeOf(err); got != tc.wantCode || !strings.Contains(err.Error(), tc.wantSays) {
				t.Fatalf("CheckGateInput = %v (code %q); want %s saying %q", err, got, tc.wantCode, tc.wantSays)
			}
		})
	}
}
