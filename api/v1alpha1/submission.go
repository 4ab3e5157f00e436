package v1alpha1

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Submission is one runnable resource (a Workflow or a TrainJob) to run,
// with the TrainingRuntimes it uses, as a client sends it: the CLI, the
// Go client and the HTTP API all submit one.
type Submission struct {
	// Files hold the documents, file by file, named as the submitter knows
	// them: errors name them.
	Files []SourceFile `json:"files"`
	// Params set the workflow's parameters, by name.
	Params map[string]string `json:"params,omitempty"`
	// Project owns the run; default "default".
	Project string `json:"project,omitempty"`
	// WorkDir is the submitter's working directory, absolute. An engine
	// that can see it (one on the submitter's machine) resolves the file
	// names against it and starts tasks in the directory of the
	// workflow's file. Otherwise each attempt starts in its own directory,
	// and a task's relative workingDir is relative to that.
	WorkDir string `json:"workDir,omitempty"`
	// Cache says how the run uses the cache: on (the default), off or
	// overwrite.
	Cache CacheMode `json:"cache,omitempty"`
	// IdempotencyKey, if set, makes the submission idempotent: a server
	// that created a run of the project with this key within its window
	// (24h) answers with that run instead of creating another. It travels
	// as the Idempotency-Key header; the CLI and the SDK send a new random
	// one with each submission, and the same one with each of its retries.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// Commit, if not nil, is asked once the submission is checked, just
	// before its run is saved: false means the submitter stopped waiting
	// (the server answered KLN-4062 at its deadline), and no run is
	// saved. The server sets it; it is never sent.
	Commit func() bool `json:"-"`
}

// IdempotencyWindow is how long a server remembers a submission's
// IdempotencyKey: the same key sent again within it answers with the run
// the first submission created.
const IdempotencyWindow = 24 * time.Hour

// Digest identifies what the submission asks for: its files, params,
// project, working directory and cache mode, not its key. A
// key sent again with another digest is another submission (KLN-4061).
func (s *Submission) Digest() string {
	var d digest
	for _, v := range []string{s.Project, s.WorkDir, string(s.Cache)} {
		d.field([]byte(v))
	}
	d.params(s.Params)
	d.field([]byte(strconv.Itoa(len(s.Files))))
	for _, f := range s.Files {
		d.field([]byte(f.Name))
		d.field(f.Data)
	}
	return d.sum()
}

// digest hashes a request field by field, each with its length, so that
// no two requests share a digest by moving bytes between fields.
type digest struct{ h hash.Hash }

func (d *digest) field(b []byte) {
	if d.h == nil {
		d.h = sha256.New()
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	d.h.Write(n[:])
	d.h.Write(b)
}

// params hashes a map's size, then its names and values in name order.
func (d *digest) params(m map[string]string) {
	d.field([]byte(strconv.Itoa(len(m))))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		d.field([]byte(name))
		d.field([]byte(m[name]))
	}
}

func (d *digest) sum() string {
	if d.h == nil {
		d.h = sha256.New()
	}
	return hex.EncodeToString(d.h.Sum(nil))
}

// SourceFile is one file of a submission.
type SourceFile struct {
	// Name is the file's name as the submitter gave it ("-" for standard input).
	Name string `json:"name"`
	// Data is the file's content: YAML or JSON documents.
	Data []byte `json:"data"`
}

// RunQuery filters and pages a list of runs.
type RunQuery struct {
	// Phase, Name, Label ("key=value") and Project keep matching runs.
	Phase   Phase  `json:"phase,omitempty"`
	Name    string `json:"name,omitempty"`
	Label   string `json:"label,omitempty"`
	Project string `json:"project,omitempty"`
	// Phases keeps runs in any of these phases (with Phase, in any of
	// them); empty keeps all.
	Phases []Phase `json:"phases,omitempty"`
	// Since and Until keep runs created at or after Since and before
	// Until; zero leaves that side open.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Search keeps runs whose ID or workflow name holds it, in any case.
	Search string `json:"q,omitempty"`
	// Ascending lists runs oldest first (default newest first); the
	// cursor follows the same order.
	Ascending bool `json:"ascending,omitempty"`
	// Cursor continues a list where the page that returned it ended.
	Cursor string `json:"cursor,omitempty"`
	// Limit caps the page (default 50, at most 500).
	Limit int `json:"limit,omitempty"`
}

// RunList is a page of runs, newest first.
type RunList struct {
	Items []*Run `json:"items"`
	// Next is the cursor of the next page; empty on the last.
	Next string `json:"next,omitempty"`
}

// LogQuery selects what a task's processes wrote.
type LogQuery struct {
	Run  RunID  `json:"run"`
	Task string `json:"task"`
	// Attempt picks an attempt; 0 means the latest, and, when following,
	// each attempt the task goes on to.
	Attempt int `json:"attempt,omitempty"`
	// Follow keeps writing until the attempt (or, for the latest, the
	// task) has ended.
	Follow bool `json:"follow,omitempty"`
	// Tail keeps only the last Tail lines of each process's log, its
	// stdout and stderr together, before following; 0 keeps them all.
	Tail int `json:"tail,omitempty"`
	// Since keeps only the lines written at or after this time.
	Since *time.Time `json:"since,omitempty"`
	// Timestamps starts each line with the time it was written, in
	// RFC 3339 with nanoseconds, as kubectl logs --timestamps does.
	Timestamps bool `json:"timestamps,omitempty"`
}
