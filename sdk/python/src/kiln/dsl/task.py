"""Tasks: Python functions run in their own process (``@kiln.task``) and
existing programs (``kiln.command``). Calling a task inside a workflow
function adds a node to the workflow and returns its handle."""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, List, Mapping, Optional, Protocol, Sequence, Tuple, Union, overload

from . import _embed
from ._typing import Cache, Duration, P, R, Resources, Retries
from .options import Options, env_list
from .control import when_of
from .refs import Output, TaskCall, _Placeholder, current_builder, render
from .train import Train
from .paths import InputPath, OutputPath

_SCALARS = {str: "str", int: "int", float: "float", bool: "bool"}


def kiln_name(name: str) -> str:
    """A Python name as a kiln task name: lowercase, dashes for underscores."""
    return re.sub(r"[^a-z0-9.-]+", "-", name.lower().replace("_", "-")).strip("-") or "task"


class Task:
    """What every task has: a name, options, declared outputs and an optional
    ``train`` block. Subclasses say how a call becomes a command."""

    def __init__(self, name: str, options: Options, train: Optional[Train]) -> None:
        if train is not None and not isinstance(train, Train):
            raise TypeError(f"task {name}: train is a kiln.Train(...), not {type(train).__name__}")
        self.name = name
        self.options = options
        self.train = train

    def output_kinds(self) -> Dict[str, str]:
        """Each output's name and kind (parameter or artifact)."""
        raise NotImplementedError

    def bind(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """The call's inputs by name; TypeError naming the task and argument when wrong."""
        raise NotImplementedError

    def command_of(self, call: TaskCall) -> Tuple[List[str], List[str], Dict[str, Any]]:
        """The call's command, args and env (a dict of values still to render)."""
        raise NotImplementedError

    def outputs_field(self) -> Optional[Dict[str, Any]]:
        """The YAML ``outputs`` field."""
        raise NotImplementedError

    def _call(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> TaskCall:
        """Adds a call of this task to the workflow being defined."""
        builder = current_builder.get()
        if builder is None:
            raise RuntimeError(
                f"task {self.name} was called outside a workflow: call tasks inside a @kiln.workflow function"
                + ("; the plain function is task.fn" if isinstance(self, FunctionTask) else "")
            )
        return builder.add(self, self.bind(args, kwargs))

    def node(self, call: TaskCall) -> Dict[str, Any]:
        """The task's YAML fields for call (name and dependsOn excluded)."""
        command, args, env = self.command_of(call)
        env.update(self.options.env(call.overrides))
        where = f"task {call.name}"
        envl = env_list(env, where)
        fields: Dict[str, Any] = {}
        train = call.overrides.get("train", self.train)
        if train is not None:
            fields["train"] = train.block(command, args, envl)
        else:
            fields["command"] = command
            if args:
                fields["args"] = args
            if envl:
                fields["env"] = envl
        outputs = self.outputs_field()
        if outputs:
            fields["outputs"] = outputs
        fields.update(self.options.to_fields({k: v for k, v in call.overrides.items() if k != "train"}))
        return scoped_fields(call, fields)


def scoped_fields(call: TaskCall, fields: Dict[str, Any]) -> Dict[str, Any]:
    """fields with what the blocks around call add: the innermost
    kiln.for_each's ``forEach`` and the kiln.condition blocks' ``when``."""
    maps = [s["forEach"] for s in call.scopes if "forEach" in s]
    out: Dict[str, Any] = {}
    if maps:
        out["forEach"] = maps[-1]
    out.update(fields)
    when = when_of(call, fields.get("when"))
    if when is not None:
        out["when"] = when
    return out


def _annotation(fn: Callable[..., Any], raw: Any) -> Any:
    """An annotation, evaluated in fn's module when written as a string."""
    if isinstance(raw, str) and not isinstance(raw, OutputPath):
        try:
            return eval(raw, fn.__globals__)  # noqa: S307 - the user's own annotation
        except Exception as e:
            raise TypeError(f"task {fn.__name__}: cannot read the annotation {raw!r}: {e}") from None
    return raw


def _return_outputs(fn: Callable[..., Any], ann: Any) -> List[Tuple[str, str]]:
    """The outputs a return annotation declares: none, ``output``, or a NamedTuple's fields."""
    if ann is inspect.Signature.empty or ann is None or ann is type(None):
        return []
    if ann in _SCALARS:
        return [("output", _SCALARS[ann])]
    fields = getattr(ann, "__annotations__", None)
    if isinstance(ann, type) and issubclass(ann, tuple) and hasattr(ann, "_fields"):
        hints = typing.get_type_hints(ann) if fields else {}
        out = []
        for f in ann._fields:
            t = hints.get(f, str)
            if t not in _SCALARS:
                raise TypeError(f"task {fn.__name__}: output {f} is a {t}; outputs are str, int, float or bool")
            out.append((f, _SCALARS[t]))
        return out
    raise TypeError(f"task {fn.__name__}: the return annotation {ann!r} is not a str, int, float, bool, "
                    "None or a NamedTuple of those")


class FunctionTask(Task, Generic[P, R]):
    """A Python function run in its own process: its source is embedded in
    the task's command (``python3 -c PROGRAM``) with a generated entry that
    parses the arguments, calls it and writes its outputs.

    Calling it in a workflow takes the function's arguments (a type checker
    checks them against its signature; an output artifact parameter, which
    has a default, is left out) and returns the call's handle."""

    python: str
    signature: inspect.Signature
    returns: List[Tuple[str, str]]
    named: Optional[Any]

    def __init__(self, fn: Callable[P, R], name: Optional[str], python: str, options: Options,
                 train: Optional[Train]) -> None:
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"@kiln.task decorates a function, not {type(fn).__name__}")
        super().__init__(name or kiln_name(fn.__name__), options, train)
        self.fn = fn
        self.python = python
        self.signature = inspect.signature(fn)
        self.inputs: Dict[str, str] = {}  # name -> str|int|float|bool|path
        self.artifacts: Dict[str, str] = {}  # output artifact parameter -> file name
        for p in self.signature.parameters.values():
            self._parameter(p)
        ann = _annotation(fn, self.signature.return_annotation)
        self.returns = _return_outputs(fn, ann)
        #: The return annotation when it is a NamedTuple (the program defines it).
        self.named = ann if isinstance(ann, type) and issubclass(ann, tuple) and hasattr(ann, "_fields") else None
        clash = {n for n, _ in self.returns} & set(self.artifacts)
        if clash:
            raise TypeError(f"task {self.name}: {', '.join(clash)} is both a return value and an OutputPath")
        self.program({})  # check it embeds, now

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> TaskCall:
        return self._call(args, kwargs)

    def program(self, params: Dict[str, str], what: str = "", training: bool = False) -> str:
        """The task's Python program for the given parameters (name -> type);
        training adds the check that only rank 0 writes outputs."""
        return _embed.program(self.fn, what or f"task {self.name}", params, [n for n, _ in self.returns],
                              self.artifacts, returns=self.named, training=training)

    def _parameter(self, p: inspect.Parameter) -> None:
        """Records one parameter of the function as an input or an output artifact."""
        where = f"task {self.name} parameter {p.name}"
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{where}: *args and **kwargs cannot be task inputs; name each one")
        ann = _annotation(self.fn, p.annotation)
        if ann is OutputPath or isinstance(ann, OutputPath):
            self.artifacts[p.name] = self._artifact_file(p, ann)
        elif ann is InputPath:
            self.inputs[p.name] = "path"
        elif ann in _SCALARS:
            self.inputs[p.name] = _SCALARS[ann]
        elif ann is inspect.Parameter.empty:
            raise TypeError(f"{where}: annotate it (str, int, float, bool, kiln.InputPath or kiln.OutputPath)")
        else:
            raise TypeError(f"{where}: {ann!r} is not a task input type (str, int, float, bool, "
                            "kiln.InputPath or kiln.OutputPath)")

    def _artifact_file(self, p: inspect.Parameter, ann: Any) -> str:
        """The file name of the output artifact parameter p: from its default
        (``= kiln.OutputPath("model.pt")``) or its annotation, else p's name."""
        if p.default is not p.empty and not isinstance(p.default, OutputPath):
            raise TypeError(f"task {self.name} parameter {p.name}: an output artifact's default is "
                            f"kiln.OutputPath(\"FILE\") or kiln.OutputPath(), not {p.default!r}")
        named = p.default.filename if isinstance(p.default, OutputPath) else None
        return named or (ann.filename if isinstance(ann, OutputPath) else None) or p.name

    def output_kinds(self) -> Dict[str, str]:
        kinds = {n: "parameter" for n, _ in self.returns}
        kinds.update({n: "artifact" for n in self.artifacts})
        return kinds

    def bind(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Dict[str, Any]:
        for n in self.artifacts:
            if n in kwargs:
                raise TypeError(f"task {self.name}: {n} is an output (kiln.OutputPath); do not pass it")
        sig = self.signature.replace(parameters=[p for p in self.signature.parameters.values()
                                                 if p.name not in self.artifacts])
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"task {self.name}: {e}") from None
        for n, v in bound.arguments.items():
            self._check_value(n, v)
        return dict(bound.arguments)

    def _check_value(self, name: str, value: Any) -> None:
        """Raises TypeError when value cannot feed the input name."""
        kind, where = self.inputs[name], f"task {self.name} argument {name}"
        if isinstance(value, TaskCall):
            value = value.output
        if isinstance(value, Output):
            if kind == "path" and value.kind != "artifact":
                raise TypeError(f"{where}: a kiln.InputPath takes an artifact; {value.call.name}.{value.name} "
                                "is a parameter")
            if kind != "path" and value.kind == "artifact":
                raise TypeError(f"{where}: {value.call.name}.{value.name} is an artifact (a path); "
                                f"annotate {name} as kiln.InputPath to read it")
            return
        if isinstance(value, _Placeholder) or kind in ("str", "path"):
            render(value, where)
            return
        py = {"int": int, "float": (int, float), "bool": bool}[kind]
        if not isinstance(value, py) or (kind != "bool" and isinstance(value, bool)):
            raise TypeError(f"{where}: expected {kind}, got {type(value).__name__} {value!r}")

    def command_of(self, call: TaskCall) -> Tuple[List[str], List[str], Dict[str, Any]]:
        params = {n: self.inputs[n] for n in call.inputs}
        prog = self.program(params, f"task {call.name}", call.overrides.get("train", self.train) is not None)
        args: List[str] = []
        for n, v in call.inputs.items():
            args += ["--" + n, render(v, f"task {call.name} argument {n}")]
        return [call.overrides.get("python", self.python), "-c", prog], args, {}

    def outputs_field(self) -> Optional[Dict[str, Any]]:
        out: Dict[str, Any] = {}
        if self.returns:
            out["parameters"] = [{"name": n} for n, _ in self.returns]
        if self.artifacts:
            out["artifacts"] = [{"name": n, "path": f} for n, f in self.artifacts.items()]
        return out or None


class CommandTask(Task):
    """An existing program as a task: its command, the outputs it writes
    (parameters to ``$KILN_OUTPUTS/NAME``, artifacts into the outputs
    directory), and per call its ``args`` and ``env``, whose items may be
    workflow parameters and upstream outputs."""

    def __init__(self, name: str, command: Sequence[str], parameters: Sequence[str],
                 artifacts: Mapping[str, str], options: Options, train: Optional[Train]) -> None:
        super().__init__(name, options, train)
        if isinstance(command, str) or not command:
            raise TypeError(f"task {name}: command is a non-empty list of strings, e.g. ['python3', 'train.py']")
        self.command = [render(c, f"task {name} command") for c in command]
        if not all(self.command):
            raise TypeError(f"task {name}: command is a non-empty list of strings, e.g. ['python3', 'train.py']")
        self.parameters = list(parameters)
        self.artifacts = dict(artifacts)

    if TYPE_CHECKING:  # what a call takes; at run time bind() names what it does not
        def __call__(self, *, args: Sequence[Any] = (), env: Optional[Mapping[str, Any]] = None) -> TaskCall:
            ...
    else:
        def __call__(self, *args, **kwargs):
            return self._call(args, kwargs)

    def output_kinds(self) -> Dict[str, str]:
        kinds = {n: "parameter" for n in self.parameters}
        kinds.update({n: "artifact" for n in self.artifacts})
        return kinds

    def bind(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Dict[str, Any]:
        unknown = set(kwargs) - {"args", "env"}
        if args or unknown:
            raise TypeError(f"task {self.name}: a command task takes args=[...] and env={{...}} "
                            f"(got {', '.join(sorted(unknown)) or 'positional arguments'})")
        a = list(kwargs.get("args") or [])
        e = dict(kwargs.get("env") or {})
        for i, v in enumerate(a):
            render(v, f"task {self.name} args[{i}]")
        for k, v in e.items():
            render(v, f"task {self.name} env {k}")
        return {"args": a, "env": e}

    def command_of(self, call: TaskCall) -> Tuple[List[str], List[str], Dict[str, Any]]:
        args = [render(v, f"task {call.name} args[{i}]") for i, v in enumerate(call.inputs["args"])]
        return list(self.command), args, dict(call.inputs["env"])

    def outputs_field(self) -> Optional[Dict[str, Any]]:
        out: Dict[str, Any] = {}
        if self.parameters:
            out["parameters"] = [{"name": n} for n in self.parameters]
        if self.artifacts:
            out["artifacts"] = [{"name": n, "path": p} for n, p in self.artifacts.items()]
        return out or None


class _TaskDecorator(Protocol):
    """What ``@kiln.task(...)`` returns: it makes a task of a function."""

    def __call__(self, fn: Callable[P, R], /) -> FunctionTask[P, R]: ...


@overload
def task(fn: Callable[P, R], /) -> FunctionTask[P, R]: ...


@overload
def task(fn: None = None, /, *, name: Optional[str] = None, python: str = "python3", train: Optional[Train] = None,
         image: Optional[str] = None, resources: Optional[Resources] = None, retries: Optional[Retries] = None,
         timeout: Optional[Duration] = None, cache: Optional[Cache] = None, env: Optional[Mapping[str, Any]] = None,
         working_dir: Optional[str] = None, priority: Optional[int] = None,
         admission_timeout: Optional[Duration] = None, when: Any = None, trigger: Optional[str] = None,
         depends: Optional[str] = None, dynamic: Union[str, Mapping[str, Any], None] = None,
         extra: Optional[Mapping[str, Any]] = None) -> _TaskDecorator: ...


def task(fn: Optional[Callable[P, R]] = None, /, *, name: Optional[str] = None, python: str = "python3",
         train: Optional[Train] = None, **options: Any) -> Any:
    """Declares a Python function as a task, with or without arguments.

    Inputs are the function's annotated parameters (str, int, float, bool,
    ``kiln.InputPath``); outputs are its return value (one ``output``, or a
    NamedTuple's fields) and its ``kiln.OutputPath`` parameters (artifacts).
    ``python`` is the task's interpreter; ``train`` runs it as a training
    job; options: image, resources, retries, timeout, cache, env,
    working_dir, priority, admission_timeout, when, trigger, extra (raw YAML
    fields). The function must be self-contained: imports inside it.
    """
    def wrap(f: Callable[..., Any], /) -> FunctionTask[..., Any]:
        where = f"task {name or kiln_name(getattr(f, '__name__', 'task'))}"
        return FunctionTask(f, name, python, Options(where, **options), train)

    return wrap(fn) if fn is not None else wrap


if TYPE_CHECKING:  # the options by name for type checkers; at run time Options names an unknown one
    def command(name: str, command: Sequence[str], *, parameters: Sequence[str] = (),
                artifacts: Optional[Mapping[str, str]] = None, train: Optional[Train] = None,
                image: Optional[str] = None, resources: Optional[Resources] = None,
                retries: Optional[Retries] = None, timeout: Optional[Duration] = None,
                cache: Optional[Cache] = None, env: Optional[Mapping[str, Any]] = None,
                working_dir: Optional[str] = None, priority: Optional[int] = None,
                admission_timeout: Optional[Duration] = None, when: Any = None,
                trigger: Optional[str] = None, depends: Optional[str] = None,
                dynamic: Union[str, Mapping[str, Any], None] = None,
                extra: Optional[Mapping[str, Any]] = None) -> CommandTask:
        """Declares a task that runs an existing program."""
        ...
else:
    def command(name: str, command: Sequence[str], *, parameters: Sequence[str] = (),
                artifacts: Optional[Mapping[str, str]] = None, train: Optional[Train] = None,
                **options: Any) -> CommandTask:
        """Declares a task that runs an existing program.

        ``parameters`` names the output parameters it writes to
        ``$KILN_OUTPUTS/NAME``; ``artifacts`` maps each output artifact to its
        path in the outputs directory (``kiln.OUTPUTS_DIR`` in args). Call it in
        a workflow with ``args=[...]`` and ``env={...}``. Options as ``kiln.task``.
        """
        return CommandTask(name, command, parameters, artifacts or {}, Options(f"task {name}", **options), train)
