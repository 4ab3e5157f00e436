"""What a workflow says beyond a list of tasks, as blocks and calls inside
the workflow function: maps (``kiln.for_each``, the YAML's ``forEach``),
conditions (``kiln.condition``, a ``when``), exit handlers
(``kiln.on_exit``, ``onExit``), gates (``kiln.gate``), and stored
templates run as subworkflows (``kiln.template``)."""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from ._typing import Duration
from .options import Options
from .refs import Condition, Output, Param, TaskCall, _Placeholder, current_builder, duration, render

#: The run's outcome in an exit handler: ``Succeeded`` or ``Failed`` (``{{workflow.status}}``).
WORKFLOW_STATUS = "{{workflow.status}}"
#: The failed tasks in an exit handler, a JSON list (``{{workflow.failures}}``).
WORKFLOW_FAILURES = "{{workflow.failures}}"


class Item(_Placeholder):
    """The item of a map, as the mapped task reads it: ``{{item}}``, a
    field ``item.lr`` (``{{item.lr}}``) or ``item.index`` (its position)."""

    def __init__(self, path: str = "item") -> None:
        self._path = path

    @property
    def template(self) -> str:
        """The kiln template that reads this item (or field)."""
        return "{{%s}}" % self._path

    def __getattr__(self, name: str) -> "Item":
        if name.startswith("_"):
            raise AttributeError(name)
        return Item(f"{self._path}.{name}")

    def __str__(self) -> str:
        return self.template

    def __format__(self, spec: str) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"Item({self._path!r})"


def _builder(what: str) -> Any:
    builder = current_builder.get()
    if builder is None:
        raise RuntimeError(f"{what} is used inside a @kiln.workflow function")
    return builder


@contextlib.contextmanager
def _scope(what: str, scope: Dict[str, Any]) -> Iterator[None]:
    builder = _builder(what)
    builder.scopes.append(scope)
    try:
        yield
    finally:
        builder.scopes.pop()


def _for_each_field(source: Any, max_parallel: Optional[int], min_successes: Optional[int],
                    min_success_ratio: Optional[float]) -> Dict[str, Any]:
    """The YAML's forEach for source: a list (items), a range, or a param/output (from)."""
    spec: Dict[str, Any] = {}
    if isinstance(source, range):
        if source.step != 1 or source.start != 0:
            spec["range"] = {"start": source.start, "end": source.stop, "step": source.step}
        else:
            spec["range"] = {"count": len(source)}
    elif isinstance(source, (Param, Output, TaskCall)):
        spec["from"] = render(source, "kiln.for_each")
    elif isinstance(source, (list, tuple)):
        for i, item in enumerate(source):
            if isinstance(item, _Placeholder):
                raise TypeError(f"kiln.for_each: item {i} is a placeholder; map over a param or output with "
                                "kiln.for_each(handle.output) instead")
        spec["items"] = list(source)
    else:
        raise TypeError("kiln.for_each maps over a list, a range, a workflow param or a task's output, "
                        f"not {type(source).__name__}")
    for key, value in (("maxParallel", max_parallel), ("minSuccesses", min_successes),
                       ("minSuccessRatio", min_success_ratio)):
        if value is not None:
            spec[key] = value
    return spec


@contextlib.contextmanager
def for_each(source: Union[Sequence[Any], range, Any], *, max_parallel: Optional[int] = None,
             min_successes: Optional[int] = None, min_success_ratio: Optional[float] = None) -> Iterator[Any]:
    """A map: each task called in the block runs once per item of source
    (a list, a ``range``, or a param or output holding a JSON list), as
    Flyte's map_task and KFP's ParallelFor; the block's value is the item
    (``item.lr``, ``item.index``). Downstream, the task's outputs are JSON
    lists in item order. The YAML's ``forEach``."""
    spec = _for_each_field(source, max_parallel, min_successes, min_success_ratio)
    with _scope("kiln.for_each", {"forEach": spec}):
        yield Item()


@contextlib.contextmanager
def condition(when: Any) -> Iterator[None]:
    """Runs the tasks called in the block only when the condition holds
    (a ``when``), as Flyte's conditional and KFP's dsl.If: built from params
    and outputs with comparisons and ``&``, ``|``, ``~``, or CEL text."""
    cond = when if isinstance(when, Condition) else None
    if cond is None and not isinstance(when, str):
        raise TypeError(f"kiln.condition takes a condition (mode == \"full\", h.succeeded, ...) or CEL text, "
                        f"not {when!r}")
    with _scope("kiln.condition", {"when": when}):
        yield


@contextlib.contextmanager
def on_exit() -> Iterator[None]:
    """An exit handler, as KFP's ExitHandler: the tasks called in the block
    run after every other task has ended, however the run went (the
    YAML's ``onExit``); they read ``kiln.WORKFLOW_STATUS`` and
    ``kiln.WORKFLOW_FAILURES``."""
    with _scope("kiln.on_exit", {"onExit": True}):
        yield


def when_of(call: TaskCall, own: Any) -> Optional[str]:
    """The call's ``when``: its own and those of the condition blocks around it, joined with &&."""
    parts = [s["when"] for s in call.scopes if "when" in s]
    if own is not None:
        parts.append(own)
    if not parts:
        return None
    if len(parts) == 1:
        return str(parts[0])
    return " && ".join(f"({p})" if isinstance(p, str) or p.prec < Condition._AND else str(p) for p in parts)


def condition_reads(call: TaskCall, own: Any) -> List[TaskCall]:
    """The tasks the call's conditions read: they run before it."""
    conds = [s["when"] for s in call.scopes if "when" in s] + ([own] if own is not None else [])
    return [c for cond in conds if isinstance(cond, Condition) for c in cond.reads]


class _Node:
    """A task without a command: a gate or a template run as a subworkflow."""

    def __init__(self, name: str, fields: Dict[str, Any], outputs: Mapping[str, str], options: Options) -> None:
        self.name = name
        self.fields = fields
        self.outputs = dict(outputs)
        self.options = options
        self.train = None

    def output_kinds(self) -> Dict[str, str]:
        return dict(self.outputs)

    def node(self, call: TaskCall) -> Dict[str, Any]:
        """The node's YAML fields (name and dependsOn excluded)."""
        from .task import scoped_fields  # noqa: PLC0415 - task imports this module

        fields = dict(self.fields)
        fields.update(self.options.to_fields(call.overrides))
        return scoped_fields(call, fields)


def gate(name: str, *, approve: Optional[str] = None, sleep: Optional[Duration] = None, until: Optional[str] = None,
         signal: Optional[str] = None, default: Optional[str] = None, message: Optional[str] = None,
         timeout: Optional[Duration] = None, on_timeout: Optional[str] = None, when: Any = None,
         trigger: Optional[str] = None) -> TaskCall:
    """A gate: a task that holds no resources and waits for an approval
    (``approve="deploy?"``: ``kiln approve RUN TASK``), a time (``sleep="1h"``
    or ``until=RFC3339``) or a signal (``signal="float"``: ``kiln signal
    RUN TASK VALUE``; downstream reads ``handle.outputs.value``). ``timeout``
    with ``on_timeout`` fail, succeed or skip. Order it with ``.after(...)``."""
    builder = _builder(f"kiln.gate({name!r})")
    kinds = [k for k, v in (("approve", approve), ("sleep", sleep or until), ("signal", signal)) if v is not None]
    if len(kinds) != 1:
        raise TypeError(f"gate {name}: give one of approve=, sleep= (or until=) and signal=")
    spec: Dict[str, Any] = {}
    if approve is not None:
        spec["approve"] = {"message": approve} if approve else {}
    elif signal is not None:
        spec["signal"] = {k: v for k, v in (("type", signal), ("message", message), ("default", default)) if v}
    else:
        spec["sleep"] = {"duration": duration(sleep, f"gate {name}")} if sleep is not None else {"until": until}
    if timeout is not None:
        spec["timeout"] = duration(timeout, f"gate {name} timeout")
    if on_timeout is not None:
        spec["onTimeout"] = on_timeout
    options = Options(f"task {name}", **{k: v for k, v in (("when", when), ("trigger", trigger)) if v is not None})
    node = _Node(name, {"gate": spec}, {"value": "parameter"} if signal is not None else {}, options)
    return builder.add(node, {})


def template(name: str, params: Optional[Mapping[str, Any]] = None, *, outputs: Sequence[str] = (),
             artifacts: Sequence[str] = (), task: Optional[str] = None) -> TaskCall:
    """Runs the stored WorkflowTemplate name (``kiln apply``) as a subworkflow
    task, with params (values, params or outputs); outputs and artifacts
    name the template's outputs that downstream reads. The YAML's
    ``workflow: {name: ..., params: [...]}``."""
    builder = _builder(f"kiln.template({name!r})")
    kinds = {n: "parameter" for n in outputs}
    kinds.update({n: "artifact" for n in artifacts})
    fields = {"workflow": subworkflow_field(name, dict(params or {}))}
    node = _Node(task or name, fields, kinds, Options(f"task {task or name}"))
    return builder.add(node, dict(params or {}))


def subworkflow_field(name: str, params: Mapping[str, Any]) -> Dict[str, Any]:
    """The YAML's ``workflow: {name, params}`` of a subworkflow task."""
    field: Dict[str, Any] = {"name": name}
    if params:
        field["params"] = [{"name": k, "value": render(v, f"subworkflow {name} param {k}")}
                           for k, v in params.items()]
    return field
