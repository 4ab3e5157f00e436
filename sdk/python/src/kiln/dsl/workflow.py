"""Workflows: a function whose parameters are the workflow's params and
whose body calls tasks; compiled to the YAML ``kiln validate`` accepts."""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Dict, Generic, List, Optional, Protocol, Union, overload

from ._typing import Duration, P, R
from .document import Document, origin_of
from ..errors import KilnError
from .control import condition_reads, subworkflow_field
from .options import Options
from .refs import Output, Param, TaskCall, current_builder, duration, render
from .task import Task, kiln_name

API_VERSION = "kiln.dev/v1alpha1"
_TASK_REF = re.compile(r"\{\{\s*tasks\.([A-Za-z0-9_.-]+?)\.outputs\.")
_NAME = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$")


class _Builder:
    """Collects the task calls of one workflow function while it runs."""

    def __init__(self, workflow: "Workflow[..., Any]") -> None:
        self.workflow = workflow
        self.calls: List[TaskCall] = []
        #: The kiln.for_each / kiln.condition / kiln.on_exit blocks the function is in.
        self.scopes: List[Dict[str, Any]] = []

    def add(self, task: Any, inputs: Dict[str, Any]) -> TaskCall:
        """Adds a call of task, named after it (``-2``, ``-3``... when called again)."""
        for v in _values(inputs):
            self._check_owner(v, task.name)
        name, n = task.name, 1
        taken = {c.name for c in self.calls}
        while name in taken:
            n += 1
            name = f"{task.name}-{n}"
        call = TaskCall(task, name, inputs, self)
        self.calls.append(call)
        return call

    def _check_owner(self, value: Any, task: str) -> None:
        """Rejects params and outputs of another workflow."""
        if isinstance(value, Param) and value.owner is not self.workflow:
            raise KilnError("KLN-1014", f"task {task} reads the parameter {value.name} of another workflow",
                            object=f"Workflow/{self.workflow.name}")
        call = value.call if isinstance(value, Output) else value if isinstance(value, TaskCall) else None
        if call is not None and call.builder is not self:
            raise KilnError("KLN-1007", f"task {task} reads an output of {call.name}, a task of another workflow",
                            object=f"Workflow/{self.workflow.name}")

    def rename(self, call: TaskCall, name: str) -> None:
        """Gives call another name; a name taken by another call is KLN-1006."""
        if any(c is not call and c.name == name for c in self.calls):
            raise KilnError("KLN-1006", f"two tasks are named {name}", object=f"Workflow/{self.workflow.name}",
                            field="spec.tasks", hint="give one of them another name with with_overrides(name=...)")
        call.name = name


class _Subworkflow:
    """A workflow run as a task of another: its params are the call's inputs."""

    def __init__(self, workflow: "Workflow[..., Any]") -> None:
        self.workflow = workflow
        self.name = workflow.name
        self.options = Options(f"task {workflow.name}")
        self.train = None

    def output_kinds(self) -> Dict[str, str]:
        return {n: "artifact" if isinstance(v, Output) and v.kind == "artifact" else "parameter"
                for n, v in self.workflow.outputs.items()}

    def node(self, call: TaskCall) -> Dict[str, Any]:
        from .task import scoped_fields  # noqa: PLC0415

        fields: Dict[str, Any] = {"workflow": subworkflow_field(self.workflow.name, call.inputs)}
        fields.update(self.options.to_fields(call.overrides))
        return scoped_fields(call, fields)


class _Template(Document):
    """A workflow as a WorkflowTemplate document (its Workflow's spec)."""

    def __init__(self, workflow: "Workflow[..., Any]") -> None:
        self.workflow = workflow
        self.origin = workflow.origin

    def to_dict(self) -> Dict[str, Any]:
        doc = self.workflow.to_dict()
        doc["kind"] = "WorkflowTemplate"
        return doc


def _values(value: Any) -> List[Any]:
    """Every leaf value inside value (dicts, lists)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _values(v)]
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return [x for v in value for x in _values(v)]
    return [value]


def _strings(value: Any) -> List[str]:
    """Every string inside value (dicts, lists)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _direct_deps(call: TaskCall, fields: Dict[str, Any], by_name: Dict[str, TaskCall]) -> List[TaskCall]:
    """The calls that call reads (in first-use order) or is ordered after."""
    deps: List[TaskCall] = []
    for s in _strings(fields):
        for ref in _TASK_REF.findall(s):
            dep = by_name.get(ref)
            if dep is None:
                raise KilnError("KLN-1007", f"task {call.name} reads outputs of {ref}, which is no task of this "
                                "workflow", field=f"spec.tasks.{call.name}")
            if dep not in deps:
                deps.append(dep)
    own = call.overrides.get("when", call.task.options.values.get("when"))
    for dep in call.explicit_after + condition_reads(call, own):
        if dep.builder is not call.builder:
            raise KilnError("KLN-1007", f"task {call.name} is ordered after {dep.name}, a task of another workflow")
        if dep not in deps:
            deps.append(dep)
    return deps


def _order(calls: List[TaskCall], deps: Dict[str, List[TaskCall]], wf: str) -> None:
    """Raises KLN-1008, naming the cycle, when the dependencies loop."""
    state: Dict[str, int] = {}
    path: List[str] = []

    def visit(c: TaskCall) -> None:
        if state.get(c.name) == 2:
            return
        if state.get(c.name) == 1:
            cycle = path[path.index(c.name):] + [c.name]
            raise KilnError("KLN-1008", "the tasks depend on each other in a cycle: " + " -> ".join(cycle),
                            object=f"Workflow/{wf}", field="spec.tasks")
        state[c.name] = 1
        path.append(c.name)
        for d in deps[c.name]:
            visit(d)
        path.pop()
        state[c.name] = 2

    for c in calls:
        visit(c)


def _reduce(deps: Dict[str, List[TaskCall]], explicit: Dict[str, List[str]]) -> Dict[str, List[str]]:
    """Drops each dependency already reached through another one, but for
    those the workflow gave with .after(), kept as written."""
    memo: Dict[str, set] = {}

    def reach(name: str) -> set:
        if name not in memo:
            memo[name] = set()
            for d in deps[name]:
                memo[name] |= {d.name} | reach(d.name)
        return memo[name]

    out = {}
    for name, ds in deps.items():
        out[name] = [d.name for d in ds
                     if d.name in explicit[name] or not any(d.name in reach(o.name) for o in ds if o is not d)]
    return out


class Workflow(Document, Generic[P, R]):
    """A compiled workflow: ``to_yaml()``, ``to_dict()``, ``save(path)``,
    ``validate()`` and ``run(...)``. Made by ``@kiln.workflow``; it keeps
    the function's parameters (P) and return type (R) for type checkers."""

    fn: Callable[..., Any]

    def __init__(self, fn: Callable[P, R], name: Optional[str] = None, *, labels: Optional[Dict[str, str]] = None,
                 timeout: Optional[Duration] = None, fail_fast: Optional[bool] = None, image: Optional[str] = None,
                 descriptions: Optional[Dict[str, str]] = None) -> None:
        self.fn = fn
        self.origin = origin_of(fn)
        self.name = name or kiln_name(fn.__name__)
        self.labels = dict(labels or {})
        self.timeout = duration(timeout, f"workflow {self.name} timeout")
        self.fail_fast = fail_fast
        self.image = image
        self.descriptions = dict(descriptions or {})
        if not _NAME.match(self.name):
            raise KilnError("KLN-1005", f"{self.name!r} is not a valid workflow name: lowercase letters, digits, "
                            "'-' and '.', starting and ending with a letter or digit", field="metadata.name")
        self.params = self._params()
        self.calls, self.outputs = self._build()
        self._doc = self._compile()

    def _params(self) -> List[Param]:
        """The function's parameters as workflow params, defaults from Python's."""
        out = []
        for p in inspect.signature(self.fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"workflow {self.name}: *args and **kwargs cannot be params; name each one")
            default = None if p.default is p.empty else p.default
            if default is not None:
                render(default, f"workflow {self.name} param {p.name} default")
            out.append(Param(p.name, default, p.annotation, self))
        return out

    def _build(self) -> Any:
        """Runs the function with a builder, collecting its task calls."""
        builder = _Builder(self)
        token = current_builder.set(builder)
        try:
            result: Any = self.fn(*self.params)  # the params stand in for P's values
        finally:
            current_builder.reset(token)
        if not builder.calls:
            raise KilnError("KLN-1004", f"workflow {self.name} calls no task", field="spec.tasks")
        return builder.calls, self._outputs(result)

    def _outputs(self, result: Any) -> Dict[str, Union[Output, str]]:
        """The workflow's outputs from the function's return value."""
        if result is None:
            return {}
        if isinstance(result, TaskCall):
            result = result.output
        if isinstance(result, Output):
            return {result.name: result}
        if isinstance(result, dict):
            return dict(result)
        if isinstance(result, tuple) and hasattr(result, "_asdict"):
            return dict(result._asdict())
        raise TypeError(f"workflow {self.name} returns {type(result).__name__}; return a task's output, a dict "
                        "of name to output, a NamedTuple or None")

    def _compile(self) -> Dict[str, Any]:
        """The Workflow document as a dict, in kiln's order."""
        by_name = {c.name: c for c in self.calls}
        fields = {c.name: c.task.node(c) for c in self.calls}
        deps = {c.name: _direct_deps(c, fields[c.name], by_name) for c in self.calls}
        _order(self.calls, deps, self.name)
        reduced = _reduce(deps, {c.name: [d.name for d in c.explicit_after] for c in self.calls})
        exits = {c.name for c in self.calls if any("onExit" in s for s in c.scopes)}
        tasks: List[Dict[str, Any]] = []
        on_exit: List[Dict[str, Any]] = []
        for c in self.calls:
            if not _NAME.match(c.name):
                raise KilnError("KLN-1005", f"{c.name!r} is not a valid task name", field=f"spec.tasks.{c.name}")
            node: Dict[str, Any] = {"name": c.name}
            # An exit handler runs after every task: it is ordered only after other exit tasks.
            after = [d for d in reduced[c.name] if (d in exits) == (c.name in exits)]
            if after and "depends" not in fields[c.name]:
                node["dependsOn"] = after
            node.update(fields[c.name])
            (on_exit if c.name in exits else tasks).append(node)
        if not tasks:
            raise KilnError("KLN-1004", f"workflow {self.name} calls no task outside kiln.on_exit", field="spec.tasks")
        return self._document(tasks, on_exit)

    def _document(self, tasks: List[Dict[str, Any]], on_exit: List[Dict[str, Any]]) -> Dict[str, Any]:
        """The whole document around tasks."""
        meta: Dict[str, Any] = {"name": self.name}
        if self.labels:
            meta["labels"] = self.labels
        spec: Dict[str, Any] = {}
        if self.params:
            spec["params"] = [self._param(p) for p in self.params]
        for key, value in (("timeout", self.timeout), ("failFast", self.fail_fast), ("image", self.image)):
            if value is not None:
                spec[key] = value
        spec["tasks"] = tasks
        if on_exit:
            spec["onExit"] = on_exit
        if self.outputs:
            params, arts = [], []
            for n, v in self.outputs.items():
                item = {"name": n, "value": render(v, f"workflow {self.name} output {n}")}
                (arts if isinstance(v, Output) and v.kind == "artifact" else params).append(item)
            spec["outputs"] = {k: v for k, v in (("parameters", params), ("artifacts", arts)) if v}
        return {"apiVersion": API_VERSION, "kind": "Workflow", "metadata": meta, "spec": spec}

    def _param(self, p: Param) -> Dict[str, Any]:
        item: Dict[str, Any] = {"name": p.name}
        if p.default is not None:
            item["default"] = render(p.default, p.name)
        if p.name in self.descriptions:
            item["description"] = self.descriptions[p.name]
        return item

    def to_dict(self) -> Dict[str, Any]:
        """The Workflow document as plain dicts and lists (a fresh copy)."""
        import copy

        return copy.deepcopy(self._doc)

    def documents(self) -> List[Dict[str, Any]]:
        """This Workflow's document, then those of the workflows it runs as subworkflows."""
        docs = [self.to_dict()]
        for c in self.calls:
            if isinstance(c.task, _Subworkflow):
                for d in c.task.workflow.documents():
                    if all(d["metadata"]["name"] != o["metadata"]["name"] for o in docs):
                        docs.append(d)
        return docs

    def as_template(self) -> Document:
        """This workflow as a WorkflowTemplate document, to store with
        ``kiln apply`` (or ``Client.apply_templates``) and run from any
        workflow of the project with ``kiln.template(name, ...)``."""
        return _Template(self)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> TaskCall:
        """Runs this workflow as a subworkflow task of the workflow being
        defined, with its params by name: the YAML's ``workflow: {name,
        params}``; the task's outputs are this workflow's outputs."""
        builder = current_builder.get()
        if builder is None:
            raise RuntimeError(f"workflow {self.name} was called outside a workflow: call it inside a "
                               "@kiln.workflow function to run it as a subworkflow, or use .run()")
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"subworkflow {self.name}: {e}") from None
        return builder.add(_Subworkflow(self), dict(bound.arguments))

    def __repr__(self) -> str:
        return f"Workflow({self.name!r}, tasks={[c.name for c in self.calls]})"


class _WorkflowDecorator(Protocol):
    """What ``@kiln.workflow(...)`` returns: it makes a Workflow of a function."""

    def __call__(self, fn: Callable[P, R], /) -> Workflow[P, R]: ...


@overload
def workflow(fn: Callable[P, R], /) -> Workflow[P, R]: ...


@overload
def workflow(fn: None = None, /, *, name: Optional[str] = None, labels: Optional[Dict[str, str]] = None,
             timeout: Optional[Duration] = None, fail_fast: Optional[bool] = None, image: Optional[str] = None,
             descriptions: Optional[Dict[str, str]] = None) -> _WorkflowDecorator: ...


def workflow(fn: Optional[Callable[P, R]] = None, /, *, name: Optional[str] = None,
             **options: Any) -> Any:
    """Declares a workflow: the function's parameters are its params (Python
    defaults become their defaults); its body calls tasks, passing outputs
    on; its return value (an output, or a dict of them) is the workflow's
    outputs. Options: labels, timeout, fail_fast, image, descriptions (of
    params). The function runs once, here, and errors surface now."""
    def wrap(f: Callable[..., Any], /) -> Workflow[..., Any]:
        return Workflow(f, name, **options)

    return wrap(fn) if fn is not None else wrap
