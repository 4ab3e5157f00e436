package server

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// maxVersionedRuns bounds how many runs' node versions a server keeps:
// a run looked at longest ago is forgotten first, and a client that sends
// one of its versions again is told to list afresh (410, KLN-4075).
const maxVersionedRuns = 256

// nodeVersions gives each node of a run the version at which this server
// first saw it as it is now, so that a client that has a run's nodes as
// of one version can ask for those that changed since. Versions count up
// across every run this server tracks, and carry the server's epoch, so
// that a version from another server, from before a restart or from a
// run forgotten since is told apart from a current one, never mistaken
// for it.
type nodeVersions struct {
	epoch string
	mu    sync.Mutex
	last  int64 // the last version given, of any run
	runs  map[apiv1.RunID]*runVersions
}

// runVersions is what a server saw of one run's nodes.
type runVersions struct {
	born  int64 // the version at which the server began tracking the run
	last  int64 // the run's newest node version
	used  int64 // when it was last looked at, for forgetting (nodeVersions.last)
	nodes map[string]nodeVersion
}

// nodeVersion is the hash of what a node was last seen as, and the
// version at which it was first seen so.
type nodeVersion struct {
	hash    uint64
	version int64
}

func newNodeVersions() *nodeVersions {
	return &nodeVersions{epoch: strconv.FormatInt(time.Now().UnixNano(), 36), runs: map[apiv1.RunID]*runVersions{}}
}

// snapshot is a run's nodes at one version: each node's own version.
type snapshot struct {
	version  int64
	versions []int64 // of each node of the run, in its order
}

// observe records the nodes of run as the server sees them now, and
// returns their versions.
func (nv *nodeVersions) observe(run *apiv1.Run) snapshot {
	hashes := make([]uint64, len(run.Status.Nodes))
	for i := range run.Status.Nodes {
		b, _ := json.Marshal(&run.Status.Nodes[i])
		h := fnv.New64a()
		_, _ = h.Write(b)
		hashes[i] = h.Sum64()
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	rv := nv.runs[run.ID]
	fresh := rv == nil
	if fresh {
		nv.forgetOldest()
		nv.last++
		rv = &runVersions{born: nv.last, last: nv.last, nodes: make(map[string]nodeVersion, len(hashes))}
		nv.runs[run.ID] = rv
	}
	snap := snapshot{versions: make([]int64, len(hashes))}
	bumped := false
	for i, h := range hashes {
		name := run.Status.Nodes[i].Name
		was, ok := rv.nodes[name]
		if !ok || was.hash != h {
			if !bumped && !fresh {
				nv.last++
				rv.last, bumped = nv.last, true
			}
			was = nodeVersion{hash: h, version: rv.last}
			rv.nodes[name] = was
		}
		snap.versions[i] = was.version
	}
	rv.used = nv.last
	snap.version = rv.last
	return snap
}

// forgetOldest forgets the run looked at longest ago when the server
// tracks as many as it may.
func (nv *nodeVersions) forgetOldest() {
	if len(nv.runs) < maxVersionedRuns {
		return
	}
	var oldest apiv1.RunID
	var used int64 = -1
	for id, rv := range nv.runs {
		if used < 0 || rv.used < used {
			oldest, used = id, rv.used
		}
	}
	delete(nv.runs, oldest)
}

// format is the resourceVersion of version v.
func (nv *nodeVersions) format(v int64) string {
	return nv.epoch + "-" + strconv.FormatInt(v, 10)
}

// parse reads a resourceVersion of run id that this server gave and can
// still answer; KLN-4075 (410) otherwise.
func (nv *nodeVersions) parse(id apiv1.RunID, s string) (int64, error) {
	epoch, num, _ := strings.Cut(s, "-")
	v, err := strconv.ParseInt(num, 10, 64)
	nv.mu.Lock()
	defer nv.mu.Unlock()
	rv := nv.runs[id]
	if err != nil || epoch != nv.epoch || rv == nil || v < rv.born || v > rv.last {
		return 0, staleVersion(s)
	}
	return v, nil
}

func staleVersion(s string) error {
	return &httpError{status: http.StatusGone, err: &apiv1.Error{Code: apiv1.CodeStaleVersion, Field: "sinceVersion",
		Message: fmt.Sprintf("sinceVersion %q is not one this server can answer (from another server, before a restart, or forgotten): list the nodes again", s)}}
}
