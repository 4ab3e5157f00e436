package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"kiln.dev/kiln/internal/job"
)

// Labels and annotations kiln puts on what it creates.
const (
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	LabelRun        = "kiln.dev/run"
	LabelNode       = "kiln.dev/node"
	LabelAttempt    = "kiln.dev/attempt"
	LabelJob        = "kiln.dev/job"
	LabelHost       = "kiln.dev/host"
	AnnoAttemptID   = "kiln.dev/attempt-id"
	AnnoDeleteAfter = "kiln.dev/delete-after"
	managedBy       = "kiln"
	// maxBase leaves room in a 63-character DNS label for "-<host>".
	maxBase = 52
)

// attempt is an attempt's ID and the names derived from it.
type attempt struct {
	ID job.AttemptID
	// Base names the attempt's objects: the pod of a one-host attempt, the
	// headless Service of a gang, and the prefix of its pods.
	Base string
}

// names derives the names of attempt id's objects.
func names(id job.AttemptID) attempt {
	return attempt{ID: id, Base: dnsLabel(id.Run+"-"+id.Node+"-"+strconv.Itoa(id.Number), maxBase)}
}

// attemptOf reads the attempt ID an object of kiln's carries.
func attemptOf(annotations map[string]string) (job.AttemptID, bool) {
	id, err := job.ParseAttemptID(annotations[AnnoAttemptID])
	return id, err == nil
}

// podName is the name of the pod of host h.
func (a attempt) podName(h int, gang bool) string {
	if !gang {
		return a.Base
	}
	return a.Base + "-" + strconv.Itoa(h)
}

// labels are the labels of every object of the attempt.
func (a attempt) labels() map[string]string {
	return map[string]string{
		LabelManagedBy: managedBy, LabelRun: dnsLabel(a.ID.Run, 63), LabelNode: dnsLabel(a.ID.Node, 63),
		LabelAttempt: strconv.Itoa(a.ID.Number), LabelJob: a.Base,
	}
}

// dnsLabel makes s a DNS-1123 label of at most max characters: lower case,
// only [a-z0-9-], no dash at either end. A name that had to be shortened
// or changed ends in a hash of the original, so distinct inputs stay distinct.
func dnsLabel(s string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == s && len(out) <= max {
		return out
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:8]
	if len(out) > max-9 {
		out = strings.TrimRight(out[:max-9], "-")
	}
	if out == "" {
		return h
	}
	return out + "-" + h
}
