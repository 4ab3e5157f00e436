package e2e

// The generator of TestLifecycleModel: from one seed, a random workflow
// (genWorkflow, written as YAML by its yaml method) and a random sequence
// of operations on its run (genOps).

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
)

// nodeKind is what a generated top-level node is.
type nodeKind string

// The kinds of generated nodes.
const (
	kindPlain   nodeKind = "plain"   // a command
	kindOutput  nodeKind = "output"  // a command that writes the output parameter v
	kindMap     nodeKind = "map"     // forEach over a range or items
	kindSub     nodeKind = "sub"     // a subworkflow of one task
	kindTrain   nodeKind = "train"   // a one-node training job (runtime plain)
	kindApprove nodeKind = "approve" // an approval gate
	kindSignal  nodeKind = "signal"  // a signal gate
	kindSleep   nodeKind = "sleep"   // a sleep gate of one second
	kindSensor  nodeKind = "sensor"  // a file sensor that waits for the release file
	kindDynamic nodeKind = "dynamic" // writes a fragment of one task, which behaves as drawn
)

// behaviour is what a generated command does after it appends its ledger line.
type behaviour string

// The behaviours of generated commands.
const (
	behaveOK   behaviour = "ok"   // exits 0
	behaveFail behaviour = "fail" // exits 1 until the fix file exists
	behaveHang behaviour = "hang" // waits for the release file (30 s at most), then exits 0
)

// genNode is one generated top-level node.
type genNode struct {
	Name    string
	Kind    nodeKind
	Deps    []string
	Behave  behaviour // plain, output, train, and the task of a sub
	Retries bool      // retries: {limit: 1}
	Reads   string    // an output node (a dependency) whose parameter v it checks
	// Maps only.
	Count       int     // items
	Items       bool    // items: [...] rather than range: {count: N}
	MaxParallel int     // 0: none
	MinRatio    float64 // 0: none (all must succeed)
	FailItem    int     // the item that fails until fixed; -1: none
	HangItem    int     // the item that hangs until released; -1: none
	OfSub       bool    // each item runs the inner workflow (inner-<name>), not a command
}

// genWorkflow is a generated workflow: top-level nodes in order (each
// depends only on earlier ones), an optional exit handler and failFast.
type genWorkflow struct {
	Nodes    []genNode
	OnExit   bool
	FailFast bool
}

// modelPaths are the files the generated commands read and write.
type modelPaths struct {
	ledger  string // "<run> <node> <attempt>" per started attempt
	exits   string // "<run> <workflow.status> <attempt>" per exit handler
	fix     string // failing commands succeed once it exists
	release string // hanging commands end once it exists
}

// genWorkflowFrom draws a workflow of 2 to 6 top-level nodes.
func genWorkflowFrom(rng *rand.Rand) genWorkflow {
	w := genWorkflow{OnExit: rng.Intn(4) != 0, FailFast: rng.Intn(4) != 0}
	n := 2 + rng.Intn(5)
	for i := range n {
		w.Nodes = append(w.Nodes, w.genNode(rng, i))
	}
	return w
}

// kindWeights are how often each kind is drawn.
var kindWeights = []struct {
	kind   nodeKind
	weight int
}{
	{kindPlain, 30},
	{kindOutput, 10},
	{kindMap, 20},
	{kindSub, 10},
	{kindTrain, 8},
	{kindApprove, 8},
	{kindSignal, 6},
	{kindSleep, 5},
	{kindSensor, 5},
	{kindDynamic, 8},
}

// drawKind draws a kind by kindWeights.
func drawKind(rng *rand.Rand) nodeKind {
	total := 0
	for _, kw := range kindWeights {
		total += kw.weight
	}
	x := rng.Intn(total)
	for _, kw := range kindWeights {
		if x -= kw.weight; x < 0 {
			return kw.kind
		}
	}
	return kindPlain
}

// drawBehaviour draws ok (60%), fail (25%) or hang (15%).
func drawBehaviour(rng *rand.Rand) behaviour {
	switch x := rng.Intn(20); {
	case x < 12:
		return behaveOK
	case x < 17:
		return behaveFail
	}
	return behaveHang
}

// genNode draws node i: its kind, behaviour and dependencies. A gate
// depends only on nodes that nothing holds (see holds), so that waiting
// for it to wait always ends.
func (w *genWorkflow) genNode(rng *rand.Rand, i int) genNode {
	kind := drawKind(rng)
	nd := genNode{Name: fmt.Sprintf("%s%d", kind[:1], i), Kind: kind, Behave: behaveOK, FailItem: -1, HangItem: -1}
	switch kind {
	case kindPlain, kindOutput, kindSub, kindTrain, kindDynamic:
		nd.Behave = drawBehaviour(rng)
	case kindMap:
		genMap(rng, &nd)
	}
	nd.Retries = kind != kindSub && kind != kindSensor && kind != kindDynamic && !nd.isGate() && !nd.OfSub && rng.Intn(4) == 0
	candidates := w.names(nd.isGate())
	rng.Shuffle(len(candidates), func(a, b int) { candidates[a], candidates[b] = candidates[b], candidates[a] })
	nd.Deps = candidates[:min(len(candidates), rng.Intn(3))]
	slices.Sort(nd.Deps)
	if kind == kindPlain || kind == kindOutput || (kind == kindMap && !nd.OfSub) {
		for _, d := range nd.Deps {
			if w.node(d).Kind == kindOutput {
				nd.Reads = d
			}
		}
	}
	return nd
}

// genMap draws a map's items and which of them fail or hang.
func genMap(rng *rand.Rand, nd *genNode) {
	nd.Count, nd.Items = 2+rng.Intn(3), rng.Intn(2) == 0
	if rng.Intn(2) == 0 {
		nd.MaxParallel = 1 + rng.Intn(2)
	}
	if rng.Intn(3) == 0 {
		nd.MinRatio = 0.5
	}
	if rng.Intn(3) == 0 {
		nd.FailItem = rng.Intn(nd.Count)
	}
	if rng.Intn(5) == 0 {
		nd.HangItem = (nd.FailItem + 1) % nd.Count
	}
	nd.OfSub = rng.Intn(4) == 0
}

// names lists the nodes generated so far; for a gate, only those that
// nothing upstream holds.
func (w *genWorkflow) names(forGate bool) []string {
	var out []string
	for _, nd := range w.Nodes {
		if !forGate || !w.tainted(nd.Name) {
			out = append(out, nd.Name)
		}
	}
	return out
}

// node returns the node named name, or nil.
func (w *genWorkflow) node(name string) *genNode {
	for i := range w.Nodes {
		if w.Nodes[i].Name == name {
			return &w.Nodes[i]
		}
	}
	return nil
}

// isGate reports whether the node is a gate.
func (nd *genNode) isGate() bool {
	return nd.Kind == kindApprove || nd.Kind == kindSignal || nd.Kind == kindSleep
}

// holds reports whether the node can hold the run until the test acts:
// it hangs (or an item or its subworkflow's task does), or it is a gate
// that waits for a decision or a signal.
func (nd *genNode) holds() bool {
	return nd.Behave == behaveHang || nd.HangItem >= 0 || nd.Kind == kindApprove || nd.Kind == kindSignal || nd.Kind == kindSensor
}

// tainted reports whether the node or a node upstream of it holds.
func (w *genWorkflow) tainted(name string) bool {
	nd := w.node(name)
	if nd == nil {
		return false
	}
	if nd.holds() {
		return true
	}
	return slices.ContainsFunc(nd.Deps, w.tainted)
}

// fails reports whether the node fails, unfixed: a command that fails
// until fixed, a map whose failing item is not tolerated (certain), or
// tolerated (maybe, depending on what failFast leaves of it).
func (nd *genNode) fails() (certain, maybe bool) {
	switch {
	case nd.Behave == behaveFail:
		return true, false
	case nd.FailItem < 0:
		return false, false
	case nd.MinRatio > 0 && float64(nd.Count-1)/float64(nd.Count) >= nd.MinRatio:
		return false, true
	}
	return true, false
}

// gates lists the generated gates of kind k.
func (w *genWorkflow) gates(k nodeKind) []string {
	var out []string
	for _, nd := range w.Nodes {
		if nd.Kind == k {
			out = append(out, nd.Name)
		}
	}
	return out
}

// without returns the workflow without node name: edges to it and reads
// of it go too.
func (w genWorkflow) without(name string) genWorkflow {
	out := genWorkflow{OnExit: w.OnExit, FailFast: w.FailFast}
	for _, nd := range w.Nodes {
		if nd.Name == name {
			continue
		}
		nd.Deps = slices.DeleteFunc(slices.Clone(nd.Deps), func(d string) bool { return d == name })
		if nd.Reads == name {
			nd.Reads = ""
		}
		out.Nodes = append(out.Nodes, nd)
	}
	return out
}

// yaml writes the workflow, and one inner workflow per subworkflow node,
// as one file's documents.
func (w genWorkflow) yaml(p modelPaths) string {
	var b strings.Builder
	ff := ""
	if !w.FailFast {
		ff = "  failFast: false\n"
	}
	fmt.Fprintf(&b, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: model}\nspec:\n%s  tasks:\n", ff)
	for _, nd := range w.Nodes {
		b.WriteString(nd.yaml(p))
	}
	if w.OnExit {
		fmt.Fprintf(&b, "  onExit:\n  - name: notify\n    resources: {cpu: 10m}\n    command: [sh, -c, '%s; echo \"$KILN_RUN_ID {{workflow.status}} $KILN_ATTEMPT\" >> %s']\n",
			ledgerLine(p), p.exits)
	}
	for _, nd := range w.Nodes {
		if nd.OfSub {
			fmt.Fprintf(&b, "---\napiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: inner-%s}\nspec:\n  params: [{name: i}]\n  tasks:\n"+
				"  - {name: i, resources: {cpu: 10m}, command: [sh, -c, '%s%s']}\n", nd.Name, ledgerLine(p),
				strings.ReplaceAll(nd.itemScript(p), "{{item.index}}", "{{params.i}}"))
		}
		if nd.Kind == kindSub {
			fmt.Fprintf(&b, "---\napiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: inner-%s}\nspec:\n  tasks:\n"+
				"  - {name: i, resources: {cpu: 10m}, command: [sh, -c, '%s']}\n", nd.Name, script(p, nd.Behave))
		}
	}
	return b.String()
}

// yaml writes the node as one item of spec.tasks.
func (nd genNode) yaml(p modelPaths) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - name: %s\n", nd.Name)
	if len(nd.Deps) > 0 {
		fmt.Fprintf(&b, "    dependsOn: [%s]\n", strings.Join(nd.Deps, ", "))
	}
	if nd.Retries {
		b.WriteString("    retries: {limit: 1}\n")
	}
	reads := ""
	if nd.Reads != "" {
		fmt.Fprintf(&b, "    env: [{name: V, value: \"{{tasks.%s.outputs.parameters.v}}\"}]\n", nd.Reads)
		reads = fmt.Sprintf("; test \"$V\" = val-%s || exit 3", nd.Reads)
	}
	switch nd.Kind {
	case kindPlain:
		fmt.Fprintf(&b, "    resources: {cpu: 10m}\n    command: [sh, -c, '%s%s']\n", script(p, nd.Behave), reads)
	case kindOutput:
		fmt.Fprintf(&b, "    resources: {cpu: 10m}\n    outputs: {parameters: [{name: v}]}\n    command: [sh, -c, '%s%s; echo val-%s > $KILN_OUTPUTS/v']\n",
			script(p, nd.Behave), reads, nd.Name)
	case kindMap:
		if nd.OfSub {
			fmt.Fprintf(&b, "    forEach: %s\n    workflow: {name: inner-%s, params: [{name: i, value: \"{{item.index}}\"}]}\n", nd.forEach(), nd.Name)
			break
		}
		fmt.Fprintf(&b, "    forEach: %s\n    resources: {cpu: 10m}\n    command: [sh, -c, '%s%s%s']\n", nd.forEach(), ledgerLine(p), reads, nd.itemScript(p))
	case kindSub:
		fmt.Fprintf(&b, "    workflow: {name: inner-%s}\n", nd.Name)
	case kindTrain:
		fmt.Fprintf(&b, "    train: {runtime: plain, numNodes: 1, resourcesPerNode: {cpu: 10m}, command: [sh, -c, '%s']}\n", script(p, nd.Behave))
	case kindApprove:
		b.WriteString("    gate: {approve: {message: \"go on?\"}}\n")
	case kindSignal:
		b.WriteString("    gate: {signal: {type: string}}\n")
	case kindSleep:
		b.WriteString("    gate: {sleep: {duration: 1s}}\n")
	case kindSensor:
		fmt.Fprintf(&b, "    sensor: {file: {path: %s}, poll: 100ms}\n", p.release)
	case kindDynamic:
		fmt.Fprintf(&b, "    dynamic: {output: fragment}\n    outputs: {parameters: [{name: fragment}]}\n    resources: {cpu: 10m}\n"+
			"    command: [sh, -c, '%s; printf \"%%s\" \"$0\" > $KILN_OUTPUTS/fragment', '%s']\n", ledgerLine(p), nd.fragment(p))
	}
	return b.String()
}

// fragment is what a dynamic node writes: one task that behaves as the
// node drew, as JSON.
func (nd genNode) fragment(p modelPaths) string {
	script, _ := json.Marshal(script(p, nd.Behave)) // a string always encodes
	return fmt.Sprintf(`{"tasks": [{"name": "f", "resources": {"cpu": "10m"}, "command": ["sh", "-c", %s]}]}`, script)
}

// forEach is the map's forEach value.
func (nd genNode) forEach() string {
	var parts []string
	if nd.Items {
		items := make([]string, nd.Count)
		for i := range items {
			items[i] = fmt.Sprintf("x%d", i)
		}
		parts = append(parts, "items: ["+strings.Join(items, ", ")+"]")
	} else {
		parts = append(parts, fmt.Sprintf("range: {count: %d}", nd.Count))
	}
	if nd.MaxParallel > 0 {
		parts = append(parts, fmt.Sprintf("maxParallel: %d", nd.MaxParallel))
	}
	if nd.MinRatio > 0 {
		parts = append(parts, fmt.Sprintf("minSuccessRatio: %g", nd.MinRatio))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// itemScript is what the map's failing and hanging items do after their
// ledger line.
func (nd genNode) itemScript(p modelPaths) string {
	s := ""
	if nd.HangItem >= 0 {
		s += fmt.Sprintf("; if [ {{item.index}} = %d ]; then %s; fi", nd.HangItem, hangScript(p))
	}
	if nd.FailItem >= 0 {
		s += fmt.Sprintf("; if [ {{item.index}} = %d ]; then test -e %s || exit 1; fi", nd.FailItem, p.fix)
	}
	return s
}

// ledgerLine appends "<run> <node> <attempt>" to the ledger.
func ledgerLine(p modelPaths) string {
	return fmt.Sprintf("echo \"$KILN_RUN_ID $KILN_TASK $KILN_ATTEMPT\" >> %s", p.ledger)
}

// hangScript waits until the release file exists, 30 seconds at most.
func hangScript(p modelPaths) string {
	return fmt.Sprintf("i=0; while [ ! -e %s ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done", p.release)
}

// script is a command's shell script: its ledger line, then its behaviour.
func script(p modelPaths, b behaviour) string {
	switch b {
	case behaveFail:
		return ledgerLine(p) + "; test -e " + p.fix + " || exit 1"
	case behaveHang:
		return ledgerLine(p) + "; " + hangScript(p)
	}
	return ledgerLine(p)
}

// opWeights are how often each operation is drawn; those that name a
// gate or a node are drawn only where the workflow has one.
var opWeights = []struct {
	op     string
	weight int
}{
	{"cancel", 6},
	{"stop", 4},
	{"kill9", 14},
	{"kill9cancel", 3},
	{"suspend", 6},
	{"unsuspend", 4},
	{"approve", 8},
	{"reject", 3},
	{"signal", 6},
	{"release", 8},
	{"finish", 8},
	{"retry", 14},
	{"rerun", 6},
	{"gc", 4},
}

// genOps draws 2 to 7 operations to apply after the run starts.
func genOps(rng *rand.Rand, w genWorkflow) []string {
	var ops []string
	for len(ops) < 2+rng.Intn(6) {
		if op := drawOp(rng, w); op != "" {
			ops = append(ops, op)
		}
	}
	return ops
}

// drawOp draws one operation, with its argument; "" when the drawn one
// does not apply to w.
func drawOp(rng *rand.Rand, w genWorkflow) string {
	total := 0
	for _, ow := range opWeights {
		total += ow.weight
	}
	x, op := rng.Intn(total), ""
	for _, ow := range opWeights {
		if x -= ow.weight; x < 0 {
			op = ow.op
			break
		}
	}
	var args []string
	switch op {
	case "approve", "reject":
		args = w.gates(kindApprove)
	case "signal":
		args = w.gates(kindSignal)
	case "rerun":
		args = w.names(false)
	default:
		return op
	}
	if len(args) == 0 {
		return ""
	}
	return op + ":" + args[rng.Intn(len(args))]
}
