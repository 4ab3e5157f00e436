package template

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	values := map[string]string{"params.n": "3", "tasks.a.outputs.parameters.x": "it's; rm -rf /"}
	lookup := func(r Ref) (string, bool) { v, ok := values[r.Raw]; return v, ok }

	cases := map[string]struct {
		in      string
		want    string
		wantErr bool
	}{
		"plain text is unchanged":          {in: "--epochs", want: "--epochs"},
		"one reference":                    {in: "--epochs={{params.n}}", want: "--epochs=3"},
		"spaces inside braces":             {in: "{{ params.n }}{{params.n}}", want: "33"},
		"shell characters pass unharmed":   {in: "{{tasks.a.outputs.parameters.x}}", want: "it's; rm -rf /"},
		"unknown reference is an error":    {in: "{{params.m}}", wantErr: true},
		"unclosed braces are an error":     {in: "{{params.n", wantErr: true},
		"empty braces are an error":        {in: "{{ }}", wantErr: true},
		"single braces are left untouched": {in: "{x}", want: "{x}"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Expand(tc.in, lookup)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Expand(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRefs(t *testing.T) {
	t.Parallel()
	refs, err := Refs("a {{params.x}} b {{ tasks.t.outputs.artifacts.m }}")
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{
		{Raw: "params.x", Path: []string{"params", "x"}},
		{Raw: "tasks.t.outputs.artifacts.m", Path: []string{"tasks", "t", "outputs", "artifacts", "m"}},
	}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("Refs (-want +got):\n%s", diff)
	}
}
