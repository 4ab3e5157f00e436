package workflow

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// leaf makes task run container or script template t, inlined: its
// inputs are the call's arguments.
func (a *argoConv) leaf(o *argoOut, task *apiv1.Task, tk string, t *argov1.Template, tf string, args argoArgs, c argoCall) {
	sc := a.calleeScope(o, tf, t, args)
	ct, cf := t.Container, tf+".container"
	if t.Script != nil {
		ct, cf = &t.Script.Container, tf+".script"
	}
	w := &argoWrap{}
	if t.Script != nil {
		w.source = sc.at(cf + ".source").rewrite(t.Script.Source)
	}
	cmd := sc.at(cf + ".command").rewriteAll(ct.Command)
	cargs := sc.at(cf + ".args").rewriteAll(ct.Args)
	a.inputArtifacts(sc, w, t, tf, args)
	a.outputs(o, task, tk, w, t, tf)
	if on := c.site.ContinueOn; on != nil && (on.Failed || on.Error) {
		// kiln fails a run when any of its tasks fails: the task goes on
		// instead, keeping the program's exit code.
		w.post = append(w.post, `[ "$rc" -eq 0 ] || echo "argo: the program exited with code $rc; continueOn lets the workflow go on" >&2`, "rc=0")
		a.c.note(c.field+".continueOn", "kiln fails a run when a task fails: this task succeeds whatever its program's exit code, which it keeps as its output exitCode and writes to its log")
		if !a.exitCodes[task.Name] {
			w.post = append([]string{`echo "$rc" >"$KILN_OUTPUTS/exitCode"`}, w.post...)
			task.Outputs = withParam(task.Outputs, "exitCode")
		}
	}
	switch {
	case t.Script != nil && len(cmd) == 0:
		a.c.fail(apiv1.CodeRequired, cf+".command", "a script template names the program that runs its source in command", "set command, such as [python3] or [sh]")
	case w.needed() && len(cmd) == 0:
		a.c.fail(apiv1.CodeRequired, cf+".command",
			"kiln wraps this template's program to pass its outputs, inputs or script, and needs its command to do so: the image's entrypoint is not known here",
			"write the image's entrypoint as command")
	case w.needed():
		task.Command = w.command(append(cmd, cargs...))
	default:
		task.Command, task.Args = cmd, cargs
	}
	o.mapField(tk+".command", cf+".command")
	o.mapField(tk+".args", cf+".args")
	a.container(o, task, tk, sc, ct, cf)
	// A task's pod template replaces the workflow's: it carries both.
	if pod := a.readArgoPod(sc, tf, "metadata", t.NodeSelector, t.Tolerations, t.Metadata); !pod.empty() {
		task.PodTemplate = a.pod.merged(pod).into(task.PodTemplate)
	}
	a.templateSettings(o, task, tk, sc, t, tf)
}

// container reads the container's image, environment, directory and
// resources; the rest of it is named as ignored.
func (a *argoConv) container(o *argoOut, task *apiv1.Task, tk string, sc *argoScope, ct *corev1.Container, cf string) {
	task.Image = sc.at(cf + ".image").rewrite(ct.Image)
	if ct.Image != "" {
		a.c.imageIgnored(cf + ".image")
		o.mapField(tk+".image", cf+".image")
	}
	task.Env = a.c.env(cf+".env", ct.Env)
	for i := range task.Env {
		task.Env[i].Value = sc.at(fmt.Sprintf("%s.env[%d].value", cf, i)).rewrite(task.Env[i].Value)
	}
	o.mapField(tk+".env", cf+".env")
	task.WorkingDir = sc.at(cf + ".workingDir").rewrite(ct.WorkingDir)
	o.mapField(tk+".workingDir", cf+".workingDir")
	if len(ct.Resources.Requests)+len(ct.Resources.Limits) > 0 {
		task.Resources = a.c.resources(cf+".resources", &ct.Resources)
		task.PodTemplate = a.c.withLimits(task.PodTemplate)
		o.mapField(tk+".resources", cf+".resources")
	}
	if len(ct.EnvFrom) > 0 {
		a.c.fail(apiv1.CodeUnsupported, cf+".envFrom", "kiln sets variables one by one", "list each variable in env (secretKeyRef for secrets)")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"volumeMounts", len(ct.VolumeMounts) > 0},
		{"ports", len(ct.Ports) > 0},
		{"imagePullPolicy", ct.ImagePullPolicy != ""},
		{"securityContext", ct.SecurityContext != nil},
		{"livenessProbe", ct.LivenessProbe != nil},
		{"readinessProbe", ct.ReadinessProbe != nil},
		{"startupProbe", ct.StartupProbe != nil},
		{"lifecycle", ct.Lifecycle != nil},
		{"stdin", ct.Stdin},
		{"tty", ct.TTY},
		{"volumeDevices", len(ct.VolumeDevices) > 0},
	} {
		if f.set {
			a.c.ignore(cf+"."+f.name, "kiln makes the task's container itself; this setting is not carried over")
		}
	}
}

// templateSettings translates what a template says of every call of it:
// retries, deadlines, and the settings kiln does not honour.
func (a *argoConv) templateSettings(o *argoOut, task *apiv1.Task, tk string, sc *argoScope, t *argov1.Template, tf string) {
	switch {
	case t.RetryStrategy != nil:
		task.Retries = a.retries(tf+".retryStrategy", t.RetryStrategy)
		o.mapField(tk+".retries", tf+".retryStrategy")
	case len(a.spec.RetryStrategy) > 0:
		// The workflow's retryStrategy is every template's default.
		r := &argov1.RetryStrategy{}
		if err := json.Unmarshal(a.spec.RetryStrategy, r); err != nil {
			a.c.fail(apiv1.CodeParse, "spec.retryStrategy", "is not a retryStrategy: "+err.Error(), "")
			break
		}
		task.Retries = a.retries("spec.retryStrategy", r)
		o.mapField(tk+".retries", "spec.retryStrategy")
	}
	switch {
	case t.ActiveDeadlineSeconds != nil:
		task.Timeout = a.seconds(sc.at(tf+".activeDeadlineSeconds"), t.ActiveDeadlineSeconds)
		o.mapField(tk+".timeout", tf+".activeDeadlineSeconds")
	case t.Timeout != "":
		task.Timeout = argoDuration(sc.at(tf + ".timeout").rewrite(t.Timeout))
		o.mapField(tk+".timeout", tf+".timeout")
	}
	if len(t.Memoize) > 0 {
		a.c.ignore(tf+".memoize", "kiln does not reuse results by a key and a config map; set a task's cache in kiln's own documents")
	}
	a.templateIgnored(t, tf)
}

// templateIgnored names the template fields kiln reads no meaning into,
// and refuses those without which the template would not run as written.
func (a *argoConv) templateIgnored(t *argov1.Template, tf string) {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"affinity", len(t.Affinity) > 0},
		{"archiveLocation", len(t.ArchiveLocation) > 0},
		{"schedulerName", len(t.SchedulerName) > 0},
		{"priorityClassName", len(t.PriorityClassName) > 0},
		{"priority", len(t.Priority) > 0},
		{"serviceAccountName", len(t.ServiceAccountName) > 0},
		{"automountServiceAccountToken", len(t.AutomountServiceAccountToken) > 0},
		{"executor", len(t.Executor) > 0},
		{"hostAliases", len(t.HostAliases) > 0},
		{"securityContext", len(t.SecurityContext) > 0},
		{"podSpecPatch", len(t.PodSpecPatch) > 0},
		{"metrics", len(t.Metrics) > 0},
		{"annotations", len(t.Annotations) > 0},
		{"pendingTimeout", len(t.PendingTimeout) > 0},
		{"podResources", len(t.PodResources) > 0},
		{"volumes", len(t.Volumes) > 0},
	} {
		if f.set {
			a.c.ignore(tf+"."+f.name, "kiln makes its pods and runs its processes itself, and does not carry this Argo setting over")
		}
	}
	for _, f := range []struct {
		name, why string
		set       bool
	}{
		{"sidecars", "kiln runs one container per task: no sidecars", len(t.Sidecars) > 0},
		{"initContainers", "kiln runs one container per task: no init containers", len(t.InitContainers) > 0},
		{"daemon", "kiln runs no daemons: a task's program ends before its dependents start", len(t.Daemon) > 0},
		{"synchronization", "kiln has no semaphores or mutexes; its pool and quotas bound what runs at once", len(t.Synchronization) > 0},
		{"resourceClaims", "kiln does not claim dynamic resources", len(t.ResourceClaims) > 0},
	} {
		if f.set {
			a.c.fail(apiv1.CodeUnsupported, tf+"."+f.name, f.why, "drop "+f.name+", or run what it runs as a task of its own")
		}
	}
}

// seconds is a number of seconds (or a template) as a Go duration.
func (a *argoConv) seconds(sc *argoScope, v *intstr.IntOrString) string {
	if v.Type == intstr.Int {
		return fmt.Sprintf("%ds", v.IntVal)
	}
	s := sc.rewrite(v.StrVal)
	if _, err := strconv.Atoi(s); err == nil {
		return s + "s"
	}
	a.c.fail(apiv1.CodeUnsupported, sc.field, fmt.Sprintf("%q is not a number of seconds: kiln sets a deadline when it reads the workflow", v.StrVal), "write a number")
	return ""
}

// retries translates a retryStrategy: the limit, and the backoff between
// attempts. Argo retries on failures by default (OnFailure, Always);
// OnError and OnTransientError retry what kiln already retries itself.
func (a *argoConv) retries(field string, r *argov1.RetryStrategy) *apiv1.RetryStrategy {
	if r == nil {
		return nil
	}
	if r.Expression != "" {
		a.c.fail(apiv1.CodeUnsupported, field+".expression", "kiln retries every failed attempt up to the limit, and cannot decide by an expression",
			"drop expression, or make the program exit 0 where no retry should follow")
	}
	if len(r.Affinity) > 0 {
		a.c.ignore(field+".affinity", "kiln places each attempt itself")
	}
	out := &apiv1.RetryStrategy{}
	if r.Limit == nil {
		a.c.fail(apiv1.CodeUnsupported, field, "without a limit Argo retries for ever; kiln retries a bounded number of times", "set limit")
	} else {
		n, err := strconv.Atoi(r.Limit.String())
		if err != nil || n < 0 {
			a.c.fail(apiv1.CodeUnsupported, field+".limit", fmt.Sprintf("%q is not a number: kiln fixes the limit when it reads the workflow", r.Limit.String()), "write a number")
		}
		out.Limit = n
	}
	switch r.RetryPolicy {
	case "", "OnFailure", "Always":
	case "OnError", "OnTransientError":
		a.c.note(field+".retryPolicy", "kiln retries attempts lost to the machine (its errors) itself, from its own budget; failures of the program are not retried")
		out.Limit = 0
	default:
		a.c.fail(apiv1.CodeUnsupported, field+".retryPolicy", fmt.Sprintf("retryPolicy %q is not one of Always, OnFailure, OnError, OnTransientError", r.RetryPolicy), "")
	}
	if b := r.Backoff; b != nil {
		out.Backoff = a.backoff(field+".backoff", b)
	}
	return out
}

func (a *argoConv) backoff(field string, b *argov1.Backoff) *apiv1.Backoff {
	out := &apiv1.Backoff{Max: argoDuration(b.MaxDuration)}
	if b.Duration != nil {
		out.Duration = argoDuration(b.Duration.String())
	}
	if b.Factor != nil {
		f, err := strconv.ParseFloat(b.Factor.String(), 64)
		if err != nil {
			a.c.fail(apiv1.CodeUnsupported, field+".factor", fmt.Sprintf("%q is not a number", b.Factor.String()), "write a number")
		}
		out.Factor = &f
	}
	if len(b.Cap) > 0 {
		a.c.ignore(field+".cap", "Argo deprecated cap: kiln reads maxDuration")
	}
	return out
}

// loop makes task a map over the call's withItems, withParam or withSequence.
func (a *argoConv) loop(sc *argoScope, task *apiv1.Task, tk string, c argoCall) {
	site := c.site
	f := &apiv1.ForEach{}
	switch {
	case len(site.WithItems) > 0:
		f.Items = a.items(sc, c.field+".withItems", site.WithItems)
		sc.o.mapField(tk+".forEach", c.field+".withItems")
	case site.WithParam != "":
		f.From = sc.at(c.field + ".withParam").rewrite(site.WithParam)
		sc.o.mapField(tk+".forEach", c.field+".withParam")
	case site.WithSequence != nil:
		a.sequence(c.field+".withSequence", site.WithSequence, f)
		sc.o.mapField(tk+".forEach", c.field+".withSequence")
	default:
		return
	}
	if c.parallelism != nil {
		f.MaxParallel = int(*c.parallelism)
	}
	task.ForEach = f
}

// items are withItems, their strings' templates rewritten.
func (a *argoConv) items(sc *argoScope, field string, in []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(in))
	for i, raw := range in {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[i], _ = json.Marshal(sc.at(fmt.Sprintf("%s[%d]", field, i)).rewrite(s))
			continue
		}
		out[i] = raw
	}
	return out
}

// sequence translates withSequence: a range, or, with a format, the
// formatted numbers as items.
func (a *argoConv) sequence(field string, s *argov1.Sequence, f *apiv1.ForEach) {
	num := func(name string, v *intstr.IntOrString) *int {
		if v == nil {
			return nil
		}
		n, err := strconv.Atoi(v.String())
		if err != nil {
			a.c.fail(apiv1.CodeUnsupported, field+"."+name, fmt.Sprintf("%q is not a number: kiln fixes a sequence's bounds when it reads the workflow", v.String()),
				"write a number, or loop over a list with withParam")
			return nil
		}
		return &n
	}
	r := &apiv1.Range{End: num("end", s.End), Count: num("count", s.Count)}
	if start := num("start", s.Start); start != nil {
		r.Start = *start
	}
	if r.End != nil && *r.End < r.Start {
		r.Step = -1
	}
	if s.Format == "" {
		f.Range = r
		return
	}
	for _, n := range rangeNumbers(r) {
		b, _ := json.Marshal(fmt.Sprintf(s.Format, n))
		f.Items = append(f.Items, b)
	}
}

// rangeNumbers lists r's numbers.
func rangeNumbers(r *apiv1.Range) []int {
	var out []int
	switch {
	case r.Count != nil:
		for i := range *r.Count {
			out = append(out, r.Start+i)
		}
	case r.End != nil && r.Step < 0:
		for n := r.Start; n >= *r.End; n-- {
			out = append(out, n)
		}
	case r.End != nil:
		for n := r.Start; n <= *r.End; n++ {
			out = append(out, n)
		}
	}
	return out
}

// withParam adds output parameter name to outs.
func withParam(outs *apiv1.Outputs, name string) *apiv1.Outputs {
	if outs == nil {
		outs = &apiv1.Outputs{}
	}
	outs.Parameters = append(outs.Parameters, apiv1.OutputParameter{Name: name})
	return outs
}
