package kube

import (
	"fmt"
	"strconv"
	"strings"
)

// outputsScript runs the task ("$@") and, if it succeeds, writes each
// output parameter to the container's termination message as a header
// line "<name> <bytes>" followed by the file's bytes, and then a record
// "!missing <bytes>" followed by the path of each declared artifact that
// is not there. It needs /bin/sh and wc in the image, as nearly every
// image has.
const outputsScript = `"$@"; rc=$?; [ "$rc" -ne 0 ] && exit "$rc"
{ for n in %s; do f="$KILN_OUTPUTS/$n"; [ -f "$f" ] || continue
  printf '%%s %%s\n' "$n" "$(wc -c < "$f" | tr -d ' ')"; cat "$f"; done
  for a in %s; do [ -e "$KILN_OUTPUTS/$a" ] && continue
  printf '!missing %%s\n%%s' "$(printf %%s "$a" | wc -c | tr -d ' ')" "$a"; done; } > %s
exit 0`

// missingRecord names a record of a declared artifact that was not written.
const missingRecord = "!missing"

// maxTerminationMessage is the most a container's termination message holds.
const maxTerminationMessage = 4096

// outputsWrapper wraps a command so that its output parameters, and the
// artifacts it failed to write, come back through the termination
// message, written to path.
func outputsWrapper(cmd, outputs, artifacts []string, path string) []string {
	quoted := make([]string, len(artifacts))
	for i, a := range artifacts {
		quoted[i] = shellQuote(a)
	}
	script := fmt.Sprintf(outputsScript, strings.Join(outputs, " "), strings.Join(quoted, " "), shellQuote(path))
	return append([]string{"/bin/sh", "-c", script, "kiln-task"}, cmd...)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// parseOutputs reads the output parameters back from a termination message
// and checks that each wanted one is there.
func parseOutputs(msg string, wanted []string) (map[string]string, error) {
	out, _, err := parseTermination(msg, wanted)
	return out, err
}

// parseTermination reads a termination message: the output parameters, each
// wanted one checked, and the JSON list of artifacts the task stored
// itself ("" if none was recorded).
func parseTermination(msg string, wanted []string) (map[string]string, string, error) {
	out, stored := map[string]string{}, ""
	for rest := msg; rest != ""; {
		header, body, ok := strings.Cut(rest, "\n")
		name, size, ok2 := strings.Cut(header, " ")
		n, err := strconv.Atoi(size)
		if !ok || !ok2 || err != nil || n < 0 || n > len(body) {
			return nil, "", fmt.Errorf("the termination message is not kiln's output record (at %q); output parameters and the stored artifacts' list must be at most %d bytes together", trim(header), maxTerminationMessage)
		}
		switch name {
		case missingRecord:
			a := body[:n]
			return nil, "", fmt.Errorf("output artifact %q was not written to $KILN_OUTPUTS/%s", a, a)
		case artifactsRecord:
			stored, rest = body[:n], body[n:]
			continue
		}
		out[name], rest = body[:n], body[n:]
	}
	for _, w := range wanted {
		if _, ok := out[w]; !ok {
			return nil, "", fmt.Errorf("output parameter %q was not written to $KILN_OUTPUTS/%s", w, w)
		}
	}
	return out, stored, nil
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
