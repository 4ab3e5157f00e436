package local

import (
	"encoding/binary"
	"encoding/json"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// The messages of the framed protocol (frame.go). Launches, their answers
// and exits, the per-task traffic, are encoded by hand; the rest (calls
// and their replies, a launch's sandbox, an exit's status) as JSON inside
// the frame: they are rare, or already JSON in the journal.

// maxEnvTable bounds a session's table of environment strings: past it,
// the engine starts the table again at its next frame and sends what it
// needs. envTableLimit is what the supervisor takes: the table at its
// bound plus one frame's new strings.
const (
	maxEnvTable   = 1 << 16
	envTableLimit = 1 << 22
)

// envTable is the engine's side of a session's environment strings: each
// is sent once, then named by its index.
type envTable struct {
	index map[string]uint64
	defs  []string // strings new to this frame
	reset bool     // the supervisor is to forget the table first
}

// ref returns s's index, adding s to the frame's new strings if the
// supervisor does not have it yet.
func (t *envTable) ref(s string) uint64 {
	if i, ok := t.index[s]; ok {
		return i
	}
	i := uint64(len(t.index))
	t.index[s] = i
	t.defs = append(t.defs, s)
	return i
}

// launchReq is one queued launch: its answer's sequence number and args.
type launchReq struct {
	seq  uint64
	args *StartArgs
}

// appendLaunches appends a msgLaunch frame of launches, naming their
// environments in env: the frame's new strings first, then the launches.
func appendLaunches(buf []byte, launches []launchReq, env *envTable) []byte {
	if env.index == nil || len(env.index) >= maxEnvTable {
		env.index, env.reset = map[string]uint64{}, true
	}
	var body []byte
	for _, l := range launches {
		body = appendLaunch(body, l, env)
	}
	return appendFrame(buf, msgLaunch, func(b []byte) []byte {
		b = appendBool(b, env.reset)
		b = appendStrings(b, env.defs)
		env.reset, env.defs = false, env.defs[:0]
		b = binary.AppendUvarint(b, uint64(len(launches)))
		return append(b, body...)
	})
}

func appendLaunch(b []byte, l launchReq, env *envTable) []byte {
	a := l.args
	b = binary.AppendUvarint(b, l.seq)
	b = appendString(b, a.ID)
	b = appendString(b, a.WorkingDir)
	b = appendString(b, a.Leader)
	b = binary.AppendVarint(b, int64(a.MinHosts))
	b = appendBool(b, a.Leave)
	b = binary.AppendVarint(b, a.Memory)
	b = binary.AppendUvarint(b, uint64(len(a.Files)))
	for name, content := range a.Files {
		b = appendString(appendString(b, name), content)
	}
	b = appendBool(b, a.Room != nil)
	if a.Room != nil {
		b = appendClaim(b, a.Room)
	}
	b = appendStrings(b, a.Release)
	var box []byte
	if a.Sandbox != nil {
		box, _ = json.Marshal(a.Sandbox) // plain fields: cannot fail
	}
	b = appendString(b, string(box))
	b = binary.AppendUvarint(b, uint64(len(a.Processes)))
	for _, p := range a.Processes {
		b = appendString(b, p.Name)
		b = binary.AppendVarint(b, int64(p.Host))
		b = appendStrings(b, p.Command)
		b = binary.AppendUvarint(b, uint64(len(p.Env)))
		for _, e := range p.Env {
			b = binary.AppendUvarint(b, env.ref(e))
		}
	}
	return b
}

func appendClaim(b []byte, c *resource.Claim) []byte {
	b = appendString(appendString(b, c.Holder), c.Waiter)
	b = appendRequest(b, c.Request)
	b = appendString(b, c.Project)
	b = binary.AppendVarint(b, int64(c.Priority))
	b = appendRequest(b, c.Step)
	return binary.AppendVarint(b, int64(c.Steps))
}

func appendRequest(b []byte, r resource.Request) []byte {
	return binary.AppendVarint(binary.AppendVarint(binary.AppendVarint(b, r.MilliCPU), r.Memory), r.GPU)
}

// decodeLaunches reads a msgLaunch message, adding its strings to the
// session's table env first.
func decodeLaunches(msg []byte, env *[]string) ([]launchReq, error) {
	d := &decoder{b: msg}
	if d.bool() {
		*env = (*env)[:0]
	}
	defs := d.strs()
	if len(*env)+len(defs) > envTableLimit {
		d.fail("environment table overflows")
	}
	*env = append(*env, defs...)
	n := d.count()
	out := make([]launchReq, 0, n)
	for range n {
		out = append(out, decodeLaunch(d, *env))
	}
	return out, d.done()
}

func decodeLaunch(d *decoder, env []string) launchReq {
	l := launchReq{seq: d.uvarint(), args: &StartArgs{}}
	a := l.args
	a.ID, a.WorkingDir, a.Leader = d.str(), d.str(), d.str()
	a.MinHosts, a.Leave, a.Memory = d.int(), d.bool(), d.varint()
	if n := d.count(); n > 0 {
		a.Files = make(map[string]string, n)
		for range n {
			a.Files[d.str()] = d.str()
		}
	}
	if d.bool() {
		a.Room = decodeClaim(d)
	}
	a.Release = d.strs()
	if box := d.bytes(); len(box) > 0 {
		a.Sandbox = &Sandbox{}
		if json.Unmarshal(box, a.Sandbox) != nil {
			d.fail("bad sandbox")
		}
	}
	n := d.count()
	a.Processes = make([]ProcessArgs, 0, n)
	for range n {
		p := ProcessArgs{Name: d.str(), Host: d.int(), Command: d.strs()}
		p.Env = make([]string, 0, d.count())
		for range cap(p.Env) {
			i := d.uvarint()
			if i >= uint64(len(env)) {
				d.fail("environment string not in the table")
				break
			}
			p.Env = append(p.Env, env[i])
		}
		a.Processes = append(a.Processes, p)
	}
	return l
}

func decodeClaim(d *decoder) *resource.Claim {
	c := &resource.Claim{Holder: d.str(), Waiter: d.str(), Request: decodeRequest(d), Project: d.str()}
	p := d.varint()
	if p < -1<<31 || p >= 1<<31 {
		d.fail("priority out of range")
	}
	c.Priority = int32(p)
	c.Step, c.Steps = decodeRequest(d), d.int()
	return c
}

func decodeRequest(d *decoder) resource.Request {
	return resource.Request{MilliCPU: d.varint(), Memory: d.varint(), GPU: d.varint()}
}

// answer is the supervisor's answer to a launch or a call.
type answer struct {
	seq       uint64
	err       string // the error's text; "" for none
	code      string // the error's code, if it had one
	contended bool   // for a launch: another engine waits for room
	body      []byte // for a call: its reply, JSON
}

// appendAnswers appends a frame of type typ (msgLaunched or msgReply)
// answering each of answers.
func appendAnswers(buf []byte, typ byte, answers []answer) []byte {
	return appendFrame(buf, typ, func(b []byte) []byte {
		b = binary.AppendUvarint(b, uint64(len(answers)))
		for _, a := range answers {
			b = binary.AppendUvarint(b, a.seq)
			b = appendString(appendString(b, a.err), a.code)
			b = appendBool(b, a.contended)
			b = appendString(b, string(a.body))
		}
		return b
	})
}

func decodeAnswers(msg []byte) ([]answer, error) {
	d := &decoder{b: msg}
	n := d.count()
	out := make([]answer, 0, n)
	for range n {
		out = append(out, answer{seq: d.uvarint(), err: d.str(), code: d.str(), contended: d.bool(), body: d.bytes()})
	}
	return out, d.done()
}

// call is one call of a named method, its arguments JSON.
type call struct {
	seq    uint64
	method string
	args   []byte
}

func appendCall(buf []byte, c call) []byte {
	return appendFrame(buf, msgCall, func(b []byte) []byte {
		b = binary.AppendUvarint(b, c.seq)
		return appendString(appendString(b, c.method), string(c.args))
	})
}

func decodeCall(msg []byte) (call, error) {
	d := &decoder{b: msg}
	c := call{seq: d.uvarint(), method: d.str(), args: d.bytes()}
	return c, d.done()
}

// appendExits appends a msgExits frame of r.
func appendExits(buf []byte, r *ExitsReply) []byte {
	return appendFrame(buf, msgExits, func(b []byte) []byte {
		b = appendString(b, r.Instance)
		b = binary.AppendUvarint(b, r.Seq)
		b = appendBool(appendBool(b, r.Reset), r.Contended)
		b = binary.AppendUvarint(b, r.Granted)
		b = binary.AppendVarint(b, int64(r.Unasked))
		b = binary.AppendUvarint(b, uint64(len(r.Exits)))
		for _, e := range r.Exits {
			st, _ := json.Marshal(&e.Status) // as the journal writes it: cannot fail
			b = appendString(appendString(b, e.ID), string(st))
		}
		return b
	})
}

func decodeExits(msg []byte) (ExitsReply, error) {
	d := &decoder{b: msg}
	r := ExitsReply{Instance: d.str(), Seq: d.uvarint(), Reset: d.bool(), Contended: d.bool(), Granted: d.uvarint(), Unasked: d.int()}
	n := d.count()
	r.Exits = make([]Exit, 0, n)
	for range n {
		e := Exit{ID: d.str()}
		if json.Unmarshal(d.bytes(), &e.Status) != nil {
			d.fail("bad exit status")
		}
		r.Exits = append(r.Exits, e)
	}
	return r, d.done()
}

func appendHello(buf []byte, instance string, pid int) []byte {
	return appendFrame(buf, msgHello, func(b []byte) []byte {
		b = binary.AppendUvarint(b, protoVersion)
		return binary.AppendVarint(appendString(b, instance), int64(pid))
	})
}

func decodeHello(msg []byte) (version uint64, info InfoReply, err error) {
	d := &decoder{b: msg}
	version, info.Instance, info.PID = d.uvarint(), d.str(), d.int()
	return version, info, d.done()
}

// appendError appends a msgError frame of err, with its code if it has one.
func appendError(buf []byte, err *apiv1.Error) []byte {
	return appendFrame(buf, msgError, func(b []byte) []byte {
		return appendString(appendString(b, string(err.Code)), err.Message)
	})
}

func decodeError(msg []byte) error {
	d := &decoder{b: msg}
	e := &apiv1.Error{Code: apiv1.Code(d.str()), Message: d.str()}
	if err := d.done(); err != nil {
		return err
	}
	return e
}
