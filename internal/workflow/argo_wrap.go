package workflow

import (
	"fmt"
	"strings"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoWrap is the shell around a template's program that does what
// Argo's executor does around a container: write a script's source to a
// file, put input artifacts in place, and keep the result, the exit code,
// output parameters and artifacts in $KILN_OUTPUTS, where kiln reads a
// task's outputs. The program's exit code is kept.
type argoWrap struct {
	// source is a script template's text; the program runs it as its last argument.
	source string
	// pre are lines run before the program; post after it, with $rc set.
	pre, post []string
	// result keeps the program's standard output as the output "result".
	result bool
}

func (w *argoWrap) needed() bool {
	return w.source != "" || len(w.pre)+len(w.post) > 0 || w.result
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// command is the wrapped program cmd: sh -c SCRIPT argo [SOURCE] CMD...
func (w *argoWrap) command(cmd []string) []string {
	var b strings.Builder
	b.WriteString("set -u\n")
	// The script and the captured output are temporary files of this
	// process alone: removed however it ends.
	b.WriteString(`src= out=; trap 'rm -f -- ${src:+"$src"} ${out:+"$out" "$out.rc"}' EXIT` + "\n")
	for _, l := range w.pre {
		b.WriteString(l + "\n")
	}
	run := `"$@"`
	args := []string{"sh", "-c", "", "argo"}
	if w.source != "" {
		b.WriteString(`src=$(mktemp) && printf '%s' "$1" >"$src" && chmod 755 "$src" && shift || exit 1` + "\n")
		run = `"$@" "$src"`
		args = append(args, w.source)
	}
	if w.result {
		b.WriteString(`out=$(mktemp) || exit 1` + "\n")
		b.WriteString("{ " + run + `; echo $? >"$out.rc"; } | tee "$out"` + "\n")
		b.WriteString(`rc=$(cat "$out.rc")` + "\n")
		b.WriteString(`printf '%s' "$(cat "$out")" >"$KILN_OUTPUTS/result"` + "\n")
	} else {
		b.WriteString(run + "\nrc=$?\n")
	}
	for _, l := range w.post {
		b.WriteString(l + "\n")
	}
	b.WriteString(`exit "$rc"`)
	args[2] = b.String()
	return append(args, cmd...)
}

// inputArtifacts puts the call's artifact arguments where the template
// reads its inputs: an upstream output (from), or data written in the
// document (raw).
func (a *argoConv) inputArtifacts(sc *argoScope, w *argoWrap, t *argov1.Template, tf string, args argoArgs) {
	if t.Inputs == nil {
		return
	}
	for i, in := range t.Inputs.Artifacts {
		f := fmt.Sprintf("%s.inputs.artifacts[%d]", tf, i)
		src := in
		if arg, ok := args.artifacts[in.Name]; ok {
			src = arg
		}
		if in.Path == "" {
			a.c.fail(apiv1.CodeRequired, f+".path", "kiln puts an input artifact at its path", "set path")
			continue
		}
		dst := shellQuote(in.Path)
		switch {
		case src.From != "":
			from := sc.at(f + ".from").rewrite(src.From)
			w.pre = append(w.pre, fmt.Sprintf(`mkdir -p "$(dirname %s)" && cp -r -- %s %s || exit 1`, dst, shellQuote(from), dst))
		case src.Raw != nil:
			data := sc.at(f + ".raw.data").rewrite(src.Raw.Data)
			w.pre = append(w.pre, fmt.Sprintf(`mkdir -p "$(dirname %s)" && printf '%%s' %s >%s || exit 1`, dst, shellQuote(data), dst))
		case src.Optional:
		default:
			a.c.fail(apiv1.CodeUnsupported, f, fmt.Sprintf("input artifact %q comes from %s: kiln passes artifacts from upstream tasks (from) or written data (raw) only", in.Name, artifactSource(src)),
				"pass it with from: \"{{tasks.T.outputs.artifacts.A}}\" from a task that writes it, or as raw.data")
		}
		a.artifactIgnored(f, src)
		a.c.note(f+".path", "the path is on this machine, shared by every task running at once", backendLocal)
	}
}

// artifactSource names where an artifact is kept, for errors.
func artifactSource(art argov1.Artifact) string {
	for _, s := range []struct {
		name string
		set  bool
	}{
		{"s3", len(art.S3) > 0},
		{"git", len(art.Git) > 0},
		{"http", len(art.HTTP) > 0},
		{"artifactory", len(art.Artifactory) > 0},
		{"hdfs", len(art.HDFS) > 0},
		{"oss", len(art.OSS) > 0},
		{"gcs", len(art.GCS) > 0},
		{"azure", len(art.Azure) > 0},
		{"plugin", len(art.Plugin) > 0},
		{"fromExpression", len(art.FromExpression) > 0},
	} {
		if s.set {
			return s.name
		}
	}
	return "nowhere kiln knows"
}

// artifactIgnored names the settings of an artifact kiln does not keep.
func (a *argoConv) artifactIgnored(f string, art argov1.Artifact) {
	for _, s := range []struct {
		name string
		set  bool
	}{
		{"archive", len(art.Archive) > 0},
		{"mode", len(art.Mode) > 0},
		{"subPath", len(art.SubPath) > 0},
		{"recurseMode", len(art.RecurseMode) > 0},
		{"artifactGC", len(art.ArtifactGC) > 0},
		{"archiveLogs", len(art.ArchiveLogs) > 0},
	} {
		if s.set {
			a.c.ignore(f+"."+s.name, "kiln keeps artifacts as files in its own store")
		}
	}
}

// outputs declares the template's outputs on task, and has the wrapper
// copy them into $KILN_OUTPUTS once the program has ended.
func (a *argoConv) outputs(o *argoOut, task *apiv1.Task, tk string, w *argoWrap, t *argov1.Template, tf string) {
	outs := &apiv1.Outputs{}
	if a.results[task.Name] {
		w.result = true
		outs.Parameters = append(outs.Parameters, apiv1.OutputParameter{Name: "result"})
	}
	if a.exitCodes[task.Name] {
		w.post = append(w.post, `echo "$rc" >"$KILN_OUTPUTS/exitCode"`)
		outs.Parameters = append(outs.Parameters, apiv1.OutputParameter{Name: "exitCode"})
	}
	if t.Outputs != nil {
		a.outputParams(outs, w, t, tf)
		a.outputArtifacts(outs, w, t, tf)
	}
	if len(outs.Parameters)+len(outs.Artifacts) > 0 {
		task.Outputs = outs
		o.mapField(tk+".outputs", tf+".outputs")
		a.globalOutputs(o, task.Name, tk, t, tf)
	}
}

func (a *argoConv) outputParams(outs *apiv1.Outputs, w *argoWrap, t *argov1.Template, tf string) {
	for i, p := range t.Outputs.Parameters {
		f := fmt.Sprintf("%s.outputs.parameters[%d]", tf, i)
		vf := p.ValueFrom
		switch {
		case vf == nil:
			a.c.fail(apiv1.CodeRequired, f+".valueFrom", "kiln reads an output parameter from a file the program writes", "set valueFrom.path")
			continue
		case vf.Path == "":
			a.c.fail(apiv1.CodeUnsupported, f+".valueFrom", "kiln reads an output parameter from a file the program writes (valueFrom.path); not from "+valueFromSource(vf),
				"have the program write the value to a file and set valueFrom.path")
			continue
		}
		out := `"$KILN_OUTPUTS/` + p.Name + `"`
		missing := fmt.Sprintf(`{ echo "argo: output parameter %s: %s was not written" >&2; [ "$rc" -ne 0 ] || rc=1; }`, p.Name, strings.ReplaceAll(vf.Path, `"`, ""))
		if len(vf.Default) > 0 {
			missing = "printf '%s' " + shellQuote(rawText(vf.Default)) + " >" + out
		}
		w.post = append(w.post, fmt.Sprintf(`if [ -f %s ]; then cp -- %s %s; else %s; fi`, shellQuote(vf.Path), shellQuote(vf.Path), out, missing))
		outs.Parameters = append(outs.Parameters, apiv1.OutputParameter{Name: p.Name})
		a.c.note(f+".valueFrom.path", "the path is on this machine, shared by every task running at once", backendLocal)
	}
}

// valueFromSource names what an output parameter is read from.
func valueFromSource(vf *argov1.ValueFrom) string {
	switch {
	case vf.Expression != "":
		return "an expression (valueFrom.expression)"
	case vf.Parameter != "":
		return "another node's parameter (valueFrom.parameter, read in DAG and steps templates only)"
	case vf.JSONPath != "", vf.JQFilter != "":
		return "a resource (valueFrom.jsonPath, jqFilter)"
	case len(vf.Supplied) > 0:
		return "a value supplied on resume (valueFrom.supplied)"
	case len(vf.ConfigMapKeyRef) > 0:
		return "a config map (valueFrom.configMapKeyRef)"
	case vf.Event != "":
		return "an event (valueFrom.event)"
	}
	return "nowhere"
}

func (a *argoConv) outputArtifacts(outs *apiv1.Outputs, w *argoWrap, t *argov1.Template, tf string) {
	for i, art := range t.Outputs.Artifacts {
		f := fmt.Sprintf("%s.outputs.artifacts[%d]", tf, i)
		if art.Path == "" {
			a.c.fail(apiv1.CodeRequired, f+".path", "kiln keeps an output artifact from the path the program writes", "set path")
			continue
		}
		if s := artifactSource(art); s != "nowhere kiln knows" {
			a.c.ignore(f+"."+s, "kiln keeps output artifacts in its own store (its artifact repository when one is configured)")
		}
		a.artifactIgnored(f, art)
		w.post = append(w.post, artifactCopy(art))
		outs.Artifacts = append(outs.Artifacts, apiv1.Artifact{Name: art.Name, Path: art.Name})
		a.c.note(f+".path", "the path is on this machine, shared by every task running at once", backendLocal)
	}
}

// artifactCopy is the line that copies an output artifact into
// $KILN_OUTPUTS; a path that holds $KILN_OUTPUTS itself (/tmp, on the
// local backend) is not copied into itself but fails the task.
func artifactCopy(art argov1.Artifact) string {
	p := shellQuote(art.Path)
	fail := `[ "$rc" -ne 0 ] || rc=1`
	cp := fmt.Sprintf(`cp -r -- %s "$KILN_OUTPUTS/%s" || { %s; }`, p, art.Name, fail)
	if art.Optional {
		cp = fmt.Sprintf(`[ ! -e %s ] || %s`, p, cp)
	}
	return fmt.Sprintf(`case "$KILN_OUTPUTS/" in %s/*) echo "argo: output artifact %s: %s holds kiln's output directory, so it is not copied" >&2; %s;; *) %s;; esac`,
		shellQuote(strings.TrimRight(art.Path, "/")), art.Name, strings.ReplaceAll(art.Path, `"`, ""), fail, cp)
}

// globalOutputs makes the template's outputs with a globalName the
// workflow's own outputs (what a finished run shows), when the task is
// one of the workflow's main tasks; elsewhere they are the task's only.
func (a *argoConv) globalOutputs(o *argoOut, task, tk string, t *argov1.Template, tf string) {
	if t.Outputs == nil {
		return
	}
	root := !o.sub && strings.HasPrefix(tk, "spec.tasks[")
	var params, arts []apiv1.WorkflowOutput
	global := func(field, name, value string, list *[]apiv1.WorkflowOutput) {
		if !root {
			a.c.ignore(field, "kiln's workflow outputs are read from its main tasks; this task's output stays its own")
			return
		}
		*list = append(*list, apiv1.WorkflowOutput{Name: name, Value: value})
	}
	for i, p := range t.Outputs.Parameters {
		if p.GlobalName != "" && p.ValueFrom != nil && p.ValueFrom.Path != "" {
			global(fmt.Sprintf("%s.outputs.parameters[%d].globalName", tf, i), p.GlobalName, "{{tasks."+task+".outputs.parameters."+p.Name+"}}", &params)
		}
	}
	for i, art := range t.Outputs.Artifacts {
		if art.GlobalName != "" && art.Path != "" {
			global(fmt.Sprintf("%s.outputs.artifacts[%d].globalName", tf, i), art.GlobalName, "{{tasks."+task+".outputs.artifacts."+art.Name+"}}", &arts)
		}
	}
	if len(params)+len(arts) == 0 {
		return
	}
	if o.wf.Spec.Outputs == nil {
		o.wf.Spec.Outputs = &apiv1.WorkflowOutputs{}
	}
	o.wf.Spec.Outputs.Parameters = append(o.wf.Spec.Outputs.Parameters, params...)
	o.wf.Spec.Outputs.Artifacts = append(o.wf.Spec.Outputs.Artifacts, arts...)
}
