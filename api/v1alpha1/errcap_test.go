package v1alpha1

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorKindWritesEveryIndexAsAStar(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ field, want string }{
		"no index":                   {"metadata.name", "KLN-1002 metadata.name"},
		"nested indices":             {"spec.tasks[12].dependsOn[3]", "KLN-1002 spec.tasks[*].dependsOn[*]"},
		"a key is not an index":      {"spec.env[PATH]", "KLN-1002 spec.env[PATH]"},
		"an open bracket at the end": {"spec.tasks[", "KLN-1002 spec.tasks["},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := ErrorKind(CodeUnknownField, tc.field); got != tc.want {
				t.Errorf("ErrorKind(%q) = %q, want %q", tc.field, got, tc.want)
			}
		})
	}
}

func TestCapErrorsKeepsFiftyOfAKindAndCountsTheRest(t *testing.T) {
	t.Parallel()
	var errs []error
	for i := range 200 {
		errs = append(errs, &Error{Code: CodeUnknownField, File: "f.yaml", Object: "Workflow/w", Field: fmt.Sprintf("spec.tasks[%d].cmd", i), Message: "unknown field"})
		if i < 3 {
			errs = append(errs, &Error{Code: CodeRequired, Field: fmt.Sprintf("spec.tasks[%d].command", i), Message: "required"})
		}
	}
	plain := errors.New("not coded")
	errs = append(errs, plain)
	got := CapErrors(errs, map[string]int{"KLN-1002 spec.tasks[*].cmd": 1000})
	if len(got) != 50+1+3+1 {
		t.Fatalf("kept %d errors, want 55", len(got))
	}
	var e *Error
	if !errors.As(got[52], &e) || e.Field != "spec.tasks[49].cmd" {
		t.Errorf("53rd error %v, want the 50th unknown field, after the 3 others, in order", got[52])
	}
	var more *Error
	if !errors.As(got[53], &more) || more.Code != CodeMoreErrors {
		t.Fatalf("after the 50th unknown field, %v, want the KLN-1086 error", got[53])
	}
	want := &Error{
		Code: CodeMoreErrors, File: "f.yaml", Object: "Workflow/w", Field: "spec.tasks[*].cmd",
		Message: "… and 1,150 more KLN-1002 like these", Omitted: 1150, OmittedCode: CodeUnknownField,
	}
	if *more != *want {
		t.Errorf("the count:\n%+v\nwant\n%+v", *more, *want)
	}
	if !errors.Is(got[len(got)-1], plain) {
		t.Errorf("last error %v, want the uncoded one kept", got[len(got)-1])
	}
}

func TestCapErrorsLeavesAShortListAsItIs(t *testing.T) {
	t.Parallel()
	errs := []error{&Error{Code: CodeRequired, Field: "spec.tasks[0].command"}, &Error{Code: CodeRequired, Field: "spec.tasks[1].command"}}
	if got := CapErrors(errs, nil); len(got) != 2 || &got[0] != &errs[0] {
		t.Errorf("CapErrors changed a list of 2: %v", got)
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 99950: "99,950", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
