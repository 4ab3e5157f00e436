package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A mistyped command or flag is the usage error, exit 2, with the
// nearest names on its one line; a word near nothing gets no guess.
func TestMistypedCommandsAndFlagsSuggest(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		want string
	}{
		"a command":           {[]string{"vlaidate"}, `unknown command "vlaidate" for "kiln"; did you mean validate?`},
		"an alias, once":      {[]string{"get", "rnus"}, `; did you mean runs?`},
		"a flag":              {[]string{"get", "runs", "--pahse", "x"}, "unknown flag: --pahse; did you mean --phase?"},
		"an inherited flag":   {[]string{"get", "runs", "--hme", "x"}, "unknown flag: --hme; did you mean --home?"},
		"nothing near":        {[]string{"get", "runs", "--zzzzzz"}, "unknown flag: --zzzzzz (hint:"},
		"a command, nothing":  {[]string{"qqqqqq"}, `unknown command "qqqqqq" for "kiln" (hint:`},
		"a word for a number": {[]string{"describe", "run", "x", "--events", "abc"}, `KLN-4002 --events: "abc" is not a whole number (hint: show the run's last N events; -1 shows all`},
		"a word for a bool":   {[]string{"get", "runs", "-w=abc"}, `KLN-4002 --watch: "abc" is not true or false`},
		"a word for a time":   {[]string{"serve", "--read-timeout", "abc"}, `KLN-4002 --read-timeout: "abc" is not a duration such as 90s`},
		"fewer than all":      {[]string{"describe", "run", "x", "--events", "-5"}, `KLN-4002 --events: -5 is not a number of events (hint: give N for the last N events, -1 for all`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			code := run(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr}, tc.args)
			if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("kiln %v: exit %d, %q; want %d and one line with %q", tc.args, code, stderr.String(), exitUsage, tc.want)
			}
		})
	}
}

// An empty list prints its items as [] in a List of its kind.
func TestPrintListOfNone(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	var none []*apiv1.Run
	if done, err := printList(&b, "json", "Run", none); !done || err != nil {
		t.Fatalf("printList: %v %v", done, err)
	}
	want := "{\n  \"apiVersion\": \"kiln.dev/v1alpha1\",\n  \"kind\": \"RunList\",\n  \"items\": []\n}\n"
	if b.String() != want {
		t.Errorf("printList of none = %q, want %q", b.String(), want)
	}
}
