package v1alpha1

import "time"

// Cache makes a task's results reusable: a later attempt of a task with
// the same key (everything that decides its result, and Version) takes
// the stored outputs instead of running, as Flyte's cache and Argo's
// memoize do.
type Cache struct {
	// Version is part of the key: change it to stop reusing older results
	// of a task whose command did not change (Flyte's cache_version).
	Version string `json:"version,omitempty"`
	// MaxAge, a Go duration ("24h"), is how old a stored result may be to
	// be reused; empty reuses results of any age.
	MaxAge string `json:"maxAge,omitempty"`
}

// CacheMode says how a run uses the cache.
type CacheMode string

// How a run uses the cache.
const (
	// CacheOn reuses stored results and stores new ones (the default).
	CacheOn CacheMode = "on"
	// CacheOff neither reads nor writes the cache.
	CacheOff CacheMode = "off"
	// CacheOverwrite computes every cached task afresh and replaces its
	// stored result.
	CacheOverwrite CacheMode = "overwrite"
)

// CacheModes lists the cache modes.
func CacheModes() []CacheMode { return []CacheMode{CacheOn, CacheOff, CacheOverwrite} }

// What the cache did for a node (CacheStatus.Result).
const (
	// CacheHit: the node took a stored result and ran nothing.
	CacheHit = "Hit"
	// CacheMiss: no usable result was stored; the node ran.
	CacheMiss = "Miss"
	// CacheStored: the node ran and its result was stored.
	CacheStored = "Stored"
	// CacheBypassed: the run does not read the cache (off or overwrite).
	CacheBypassed = "Bypassed"
	// CacheUnavailable: the node cannot be cached here (Message says why).
	CacheUnavailable = "Unavailable"
)

// CacheStatus is what the cache did for one node.
type CacheStatus struct {
	// Key is the digest of everything that decides the node's result.
	Key string `json:"key,omitempty"`
	// Result is Hit, Miss, Stored, Bypassed or Unavailable.
	Result string `json:"result"`
	// Message says why a stored result was not used, or not stored.
	Message string `json:"message,omitempty"`
	// SourceRun and SourceNode computed the result a hit reused.
	SourceRun  RunID  `json:"sourceRun,omitempty"`
	SourceNode string `json:"sourceNode,omitempty"`
	// OutputDir is where a hit's artifacts were placed for downstream tasks.
	OutputDir string `json:"outputDir,omitempty"`
}

// CacheEntry is one stored result.
type CacheEntry struct {
	// Key is the digest the result is stored under.
	Key string `json:"key"`
	// Project the entry belongs to; only its runs reuse it.
	Project string `json:"project"`
	// Workflow and Task name what computed it, for people.
	Workflow string `json:"workflow"`
	Task     string `json:"task"`
	// Version is the task's cache version.
	Version string `json:"version,omitempty"`
	// SourceRun and SourceNode computed it.
	SourceRun  RunID  `json:"sourceRun"`
	SourceNode string `json:"sourceNode"`
	// Outputs are the output parameters.
	Outputs map[string]string `json:"outputs,omitempty"`
	// Artifacts are the output artifacts, content-addressed.
	Artifacts []CachedArtifact `json:"artifacts,omitempty"`
	// Size is the bytes of the entry's artifacts.
	Size int64 `json:"size"`
	// CreatedAt is when it was stored; UsedAt when it was last reused.
	CreatedAt time.Time `json:"createdAt"`
	UsedAt    time.Time `json:"usedAt"`
	// ExpiresAt is when MaxAge runs out, if the task set one.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// CachedArtifact is one artifact of a cache entry: a file, or a directory
// whose files are listed with their digests.
type CachedArtifact struct {
	// Name and Path are the artifact's, as the task declared it.
	Name string `json:"name"`
	Path string `json:"path"`
	// Digest is "sha256:<hex>" of a file, or of a directory's manifest.
	Digest string `json:"digest"`
	// Size is its bytes.
	Size int64 `json:"size"`
	// Mode, of a file, is 0755 if it is executable, else 0644.
	Mode uint32 `json:"mode,omitempty"`
	// Dir says the artifact is a directory, whose files, if any, are Files.
	Dir bool `json:"dir,omitempty"`
	// Files are a directory's files, by path relative to it; nil for a file.
	Files []CachedFile `json:"files,omitempty"`
}

// CachedFile is one file of a cached directory.
type CachedFile struct {
	Path   string `json:"path"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
	// Mode is 0755 for an executable file, else 0644.
	Mode uint32 `json:"mode,omitempty"`
}

// CacheQuery filters cache entries.
type CacheQuery struct {
	// Project keeps a project's entries; empty keeps all the caller may see.
	Project string `json:"project,omitempty"`
	// Workflow and Task keep entries computed by that workflow or task.
	Workflow string `json:"workflow,omitempty"`
	Task     string `json:"task,omitempty"`
}

// CachePrune says what to remove from the cache.
type CachePrune struct {
	// All removes every entry (of Project, if set).
	All bool `json:"all,omitempty"`
	// Project limits the prune to one project.
	Project string `json:"project,omitempty"`
	// OlderThan, a Go duration, removes entries not used for that long.
	OlderThan string `json:"olderThan,omitempty"`
	// MaxSize, a quantity ("10Gi"), removes the least recently used
	// entries until the cache holds at most that much.
	MaxSize string `json:"maxSize,omitempty"`
}

// CachePruned is what a prune removed.
type CachePruned struct {
	Entries int   `json:"entries"`
	Bytes   int64 `json:"bytes"`
}
