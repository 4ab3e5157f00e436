"""What a workflow function handles: its parameters, task calls and their
outputs. Each renders as the kiln template that reads it, so a value can be
passed to a task as is or inside an f-string."""

from __future__ import annotations

import contextvars
import datetime
import json
import os
import re
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

if TYPE_CHECKING:  # pragma: no cover
    from .task import Task

#: The workflow being defined, while its function runs.
current_builder: contextvars.ContextVar[Any] = contextvars.ContextVar("kiln_workflow_builder", default=None)


class _Placeholder:
    """What params and outputs share: they are placeholders that kiln fills in
    at run time, so using one as a Python value while the workflow function
    runs (arithmetic, comparison, truth, iteration, len, index) is an error
    that says what to do instead."""

    def _refuse(self, what: str) -> TypeError:
        return TypeError(
            f"{self!r} is a placeholder that kiln fills in at run time ({self}); the workflow function runs "
            f"once, at compile time, so it cannot {what}. Instead: build text with an f-string "
            f"(f\"--n={{x}}\"), run a task only when a condition holds with `with kiln.condition(x > 3):` or when=... "
            "(compared and combined with & | ~, it compiles to a CEL when), or compute the value in a task and "
            "pass its output on"
        )

    def __bool__(self) -> bool:
        raise self._refuse("be tested for truth (if/and/or/not)")

    def __iter__(self) -> Any:
        raise self._refuse("be iterated over (for a map over its values, use `with kiln.for_each(x) as item:`)")

    def __len__(self) -> int:
        raise self._refuse("take len()")

    def __index__(self) -> int:
        raise self._refuse("be used as an integer (range, an index)")

    def __getitem__(self, key: Any) -> Any:
        raise self._refuse("be indexed")

    def __int__(self) -> int:
        raise self._refuse("be converted with int()")

    def __float__(self) -> float:
        raise self._refuse("be converted with float()")

    def __hash__(self) -> int:
        return id(self)


def _arith(symbol: str) -> Any:
    def refuse(self: _Placeholder, other: Any = None) -> Any:
        raise self._refuse(f"be used in arithmetic ({symbol})")
    return refuse


for _name, _sym in (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"),
                    ("mod", "%"), ("pow", "**")):
    setattr(_Placeholder, f"__{_name}__", _arith(_sym))
    setattr(_Placeholder, f"__r{_name}__", _arith(_sym))
for _name, _sym in (("neg", "-"), ("pos", "+"), ("abs", "abs()")):
    setattr(_Placeholder, f"__{_name}__", _arith(_sym))
for _name, _sym in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!=")):
    setattr(_Placeholder, f"__{_name}__", lambda self, other, _s=_sym: Condition.compare(self, _s, other))


class Condition:
    """A condition in CEL, the language of a task's ``when``: built from
    params and outputs with comparisons (``mode == "full"``, ``n > 3``),
    task outcomes (``handle.succeeded``) and ``&``, ``|``, ``~`` (and, or,
    not). It renders as the CEL text kiln reads; the tasks it reads are
    ordered before the task it guards. Testing one with ``if`` is an error:
    it is decided at run time."""

    _AND, _OR, _NOT, _CMP, _ATOM = 2, 1, 4, 3, 5

    def __init__(self, render: Any, prec: int, reads: List["TaskCall"]) -> None:
        self._render = render  # () -> str, late: a task may be renamed after
        self.prec = prec
        self.reads = reads

    @property
    def cel(self) -> str:
        """The condition as CEL text."""
        return str(self._render())

    def __str__(self) -> str:
        return self.cel

    def __repr__(self) -> str:
        return f"Condition({self.cel!r})"

    def _wrap(self, prec: int) -> str:
        return f"({self.cel})" if self.prec < prec else self.cel

    @staticmethod
    def operand(value: Any) -> "Condition":
        """value as a CEL operand: a param, an output, a condition or a literal."""
        if isinstance(value, Condition):
            return value
        if isinstance(value, Param):
            return Condition(lambda: cel_name("params", value.name), Condition._ATOM, [])
        if isinstance(value, TaskCall):
            value = value.output
        if isinstance(value, Output):
            if value.kind != "parameter":
                raise TypeError(f"{value!r} is an artifact: a condition reads output parameters")
            call, name = value.call, value.name
            return Condition(lambda: cel_name("tasks", call.name) + ".outputs.parameters." + name,
                             Condition._ATOM, [call])
        if isinstance(value, bool):
            return Condition(lambda: "true" if value else "false", Condition._ATOM, [])
        if isinstance(value, (int, float, str)):
            return Condition(lambda: json.dumps(value), Condition._ATOM, [])
        raise TypeError(f"a condition compares params, outputs and str, int, float or bool, not {value!r}")

    @staticmethod
    def compare(left: Any, symbol: str, right: Any) -> "Condition":
        """left SYMBOL right, in CEL."""
        a, b = Condition.operand(left), Condition.operand(right)
        return Condition(lambda: f"{a._wrap(Condition._ATOM)} {symbol} {b._wrap(Condition._ATOM)}",
                         Condition._CMP, a.reads + b.reads)

    def __and__(self, other: Any) -> "Condition":
        o = Condition.operand(other)
        return Condition(lambda: f"{self._wrap(Condition._AND)} && {o._wrap(Condition._AND)}", Condition._AND,
                         self.reads + o.reads)

    def __or__(self, other: Any) -> "Condition":
        o = Condition.operand(other)
        return Condition(lambda: f"{self._wrap(Condition._OR)} || {o._wrap(Condition._OR)}", Condition._OR,
                         self.reads + o.reads)

    def __rand__(self, other: Any) -> "Condition":
        return Condition.operand(other) & self

    def __ror__(self, other: Any) -> "Condition":
        return Condition.operand(other) | self

    def __invert__(self) -> "Condition":
        return Condition(lambda: f"!{self._wrap(Condition._NOT)}", Condition._NOT, list(self.reads))

    def __bool__(self) -> bool:
        raise TypeError(
            f"the condition {self.cel!r} is decided when the run runs, not when the workflow function does: "
            "combine conditions with & | ~ (not and/or/not), and guard tasks with `with kiln.condition(...)` "
            "or when=..."
        )

    __hash__ = object.__hash__


for _name, _sym in (("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!=")):
    setattr(Condition, f"__{_name}__", lambda self, other, _s=_sym: Condition.compare(self, _s, other))


def cel_name(root: str, name: str) -> str:
    """root.NAME in CEL, or root["NAME"] for a name CEL cannot spell (a-b)."""
    return f"{root}.{name}" if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) else f'{root}["{name}"]'


class Param(_Placeholder):
    """A workflow parameter, as the workflow function receives it; it reads
    as ``{{params.NAME}}`` (a string at run time)."""

    def __init__(self, name: str, default: Any, annotation: Any, owner: Any) -> None:
        self.name = name
        self.default = default
        self.annotation = annotation
        self.owner = owner

    @property
    def template(self) -> str:
        """The kiln template that reads this parameter."""
        return "{{params.%s}}" % self.name

    def __str__(self) -> str:
        return self.template

    def __format__(self, spec: str) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"Param({self.name!r})"


class Output(_Placeholder):
    """One output of a task call: a parameter (a small value) or an
    artifact (a file or directory; it reads as an absolute path)."""

    def __init__(self, call: "TaskCall", name: str, kind: str) -> None:
        self.call = call
        self.name = name
        self.kind = kind  # "parameter" or "artifact"

    @property
    def template(self) -> str:
        """The kiln template that reads this output."""
        return "{{tasks.%s.outputs.%ss.%s}}" % (self.call.name, self.kind, self.name)

    def __str__(self) -> str:
        return self.template

    def __format__(self, spec: str) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"Output({self.call.name}.{self.kind}s.{self.name})"


class Outputs:
    """A task call's outputs by name: ``outputs["loss"]`` or ``outputs.loss``."""

    def __init__(self, call: "TaskCall", kinds: Dict[str, str]) -> None:
        self._items = {n: Output(call, n, k) for n, k in kinds.items()}
        self._call = call

    # Typed Any: an output stands for the value it will hold at run time, so a
    # type checker lets it be passed where the task's function takes that value.
    def __getitem__(self, name: str) -> Any:
        try:
            return self._items[name]
        except KeyError:
            have = ", ".join(self._items) or "none"
            raise KeyError(f"task {self._call.name} has no output {name!r} (its outputs: {have})") from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(str(e.args[0])) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class TaskCall:
    """A task called in a workflow: the handle to pass its outputs on, order
    it after other calls (``after``) or change its options for this call
    (``with_overrides``)."""

    def __init__(self, task: "Task", name: str, inputs: Dict[str, Any], builder: Any) -> None:
        self.task = task
        self.name = name
        self.inputs = inputs
        self.builder = builder
        self.explicit_after: List[TaskCall] = []
        self.overrides: Dict[str, Any] = {}
        #: What the blocks around the call say (kiln.for_each, kiln.condition, kiln.on_exit), outermost first.
        self.scopes: List[Dict[str, Any]] = list(getattr(builder, "scopes", []))
        self.outputs = Outputs(self, task.output_kinds())

    @property
    def output(self) -> Any:
        """The task's only output, or its only output parameter when it also
        has artifacts (a TypeError when that is not one). An ``Output``, typed
        Any: it stands for the value it will hold at run time."""
        names = list(self.outputs)
        if len(names) != 1:
            params = [n for n in names if self.outputs[n].kind == "parameter"]
            if len(params) == 1:
                return self.outputs[params[0]]
            spell = " or ".join(f".outputs.{n}" for n in names) or "none to name"
            raise TypeError(
                f"task {self.name} has {len(names)} outputs ({', '.join(names) or 'none'}) and "
                f"{len(params)} output parameters: name one, {spell}"
            )
        return self.outputs[names[0]]

    def after(self, *calls: "TaskCall") -> "TaskCall":
        """Runs this task after calls, which it otherwise would not wait for."""
        for c in calls:
            if not isinstance(c, TaskCall):
                raise TypeError(f"task {self.name}: after() takes task calls, not {type(c).__name__}")
            self.explicit_after.append(c)
        return self

    def with_overrides(self, *, name: Optional[str] = None, **options: Any) -> "TaskCall":
        """Changes this call's name or options (the task decorator's keywords)."""
        if name is not None:
            self.builder.rename(self, name)
        if options:
            self.task.options.check_keys(options, self.name)
            self.overrides.update(options)
        return self

    @property
    def succeeded(self) -> Any:
        """The condition that this task succeeded (CEL ``tasks.NAME.succeeded``); typed Any, for ``&``."""
        return Condition(lambda: cel_name("tasks", self.name) + ".succeeded", Condition._ATOM, [self])

    @property
    def failed(self) -> Any:
        """The condition that this task failed (``tasks.NAME.failed``)."""
        return Condition(lambda: cel_name("tasks", self.name) + ".failed", Condition._ATOM, [self])

    @property
    def skipped(self) -> Any:
        """The condition that this task was skipped (``tasks.NAME.skipped``)."""
        return Condition(lambda: cel_name("tasks", self.name) + ".skipped", Condition._ATOM, [self])

    @property
    def phase(self) -> Any:
        """This task's phase, to compare (``tasks.NAME.phase == "Failed"``)."""
        return Condition(lambda: cel_name("tasks", self.name) + ".phase", Condition._ATOM, [self])

    def __repr__(self) -> str:
        return f"TaskCall({self.name!r})"


def render(value: Any, where: str) -> str:
    """value as one argument or env value: a template for params and outputs,
    ``true``/``false`` for bools, the text of numbers and paths."""
    if isinstance(value, _Placeholder):
        return str(getattr(value, "template"))
    if isinstance(value, TaskCall):
        return render(value.output, where)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"{where}: cannot pass a {type(value).__name__} ({value!r}); pass a str, int, float, bool, "
                    "a workflow parameter or a task's output")


def duration(value: Any, where: str) -> Optional[str]:
    """A duration option as kiln reads it: a string ("10m") as is, seconds or a timedelta as "Ns"."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return f"{int(value)}s" if value == int(value) else f"{value}s"
    raise TypeError(f"{where}: a duration is a string such as '10m', a number of seconds or a timedelta, not {value!r}")
