"""A standalone TrainJob (kind TrainJob), built in Python."""

from __future__ import annotations

import copy
import sys
import types
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

from . import _embed
from .document import Document, origin_of
from ..errors import KilnError
from .options import env_list
from .refs import render
from .task import FunctionTask, kiln_name
from .train import Train
from .train import run_policy as _run_policy
from .workflow import API_VERSION, _NAME


class TrainJob(Document):
    """A distributed training job, compiled to a document of kind TrainJob.

    ``runtime`` is a runtime's name (``torch-distributed``, ``mpi``,
    ``xgboost``, ``tensorflow``, ``jax``, ``plain`` or a stored one);
    ``command`` runs in every process, or ``function`` (a self-contained
    Python function, run with ``python``) with literal ``arguments``.

    Its run has one task, named ``trainer``: follow its processes' output
    with ``client.logs(run.id, "trainer", follow=True)``, or
    ``python -m kiln logs RUN trainer`` (``kiln logs RUN trainer`` for a
    local run).
    """

    def __init__(self, name: str, *, runtime: str = "torch-distributed", command: Optional[Sequence[str]] = None,
                 args: Sequence[Any] = (), function: Optional[Callable[..., Any]] = None,
                 arguments: Optional[Mapping[str, Any]] = None, python: str = "python3",
                 num_nodes: Optional[int] = None, num_proc_per_node: Union[int, str, None] = None,
                 resources_per_node: Optional[Mapping[str, Any]] = None, env: Optional[Mapping[str, Any]] = None,
                 image: Optional[str] = None, run_policy: Optional[Mapping[str, Any]] = None,
                 priority: Optional[int] = None, suspend: Optional[bool] = None,
                 labels: Optional[Dict[str, str]] = None) -> None:
        if not _NAME.match(name or ""):
            raise KilnError("KLN-1005", f"{name!r} is not a valid TrainJob name", field="metadata.name")
        if (command is None) == (function is None):
            raise ValueError(f"TrainJob {name}: give exactly one of command=[...] and function=")
        self.name = name
        caller = sys._getframe(1).f_code.co_filename  # noqa: SLF001 - where the TrainJob is built
        self.origin = origin_of(function if isinstance(function, types.FunctionType) else None,
                                caller if caller.endswith(".py") else "", name)
        self.labels = dict(labels or {})
        self.train = Train(runtime, num_nodes=num_nodes, num_proc_per_node=num_proc_per_node,
                           resources_per_node=resources_per_node, image=image)
        if function is not None:
            command, args = self._function(function, arguments or {}, python)
        elif arguments:
            raise ValueError(f"TrainJob {name}: arguments= goes with function=; give a command's args=[...]")
        self.command = list(command or [])
        self.args = [render(a, f"TrainJob {name} args[{i}]") for i, a in enumerate(args)]
        self.env = env_list(env, f"TrainJob {name}")
        self.run_policy = _run_policy(run_policy)
        self.priority = priority
        self.suspend = suspend

    def _function(self, fn: Callable[..., Any], arguments: Mapping[str, Any], python: str) -> Any:
        """The command and args that run fn in every process."""
        if isinstance(fn, FunctionTask):
            fn = fn.fn
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"TrainJob {self.name}: function= takes a function, not {type(fn).__name__}")
        task = FunctionTask(fn, kiln_name(fn.__name__), python, _no_options(), None)
        inputs = task.bind((), dict(arguments))
        prog = _embed.program(fn, f"TrainJob {self.name}", {n: task.inputs[n] for n in inputs},
                              [n for n, _ in task.returns], task.artifacts, returns=task.named, training=True)
        args = []
        for n, v in inputs.items():
            args += ["--" + n, render(v, f"TrainJob {self.name} argument {n}")]
        return [python, "-c", prog], args

    def to_dict(self) -> Dict[str, Any]:
        """The TrainJob document as plain dicts and lists."""
        meta: Dict[str, Any] = {"name": self.name}
        if self.labels:
            meta["labels"] = self.labels
        spec: Dict[str, Any] = {"runtimeRef": {"name": self.train.runtime},
                                "trainer": self.train.trainer_fields(self.command, self.args, self.env)}
        if self.run_policy:
            spec["runPolicy"] = copy.deepcopy(self.run_policy)
        if self.priority is not None:
            spec["priority"] = self.priority
        if self.suspend is not None:
            spec["suspend"] = self.suspend
        return {"apiVersion": API_VERSION, "kind": "TrainJob", "metadata": meta, "spec": spec}



def _no_options() -> Any:
    from .options import Options

    return Options("TrainJob")
