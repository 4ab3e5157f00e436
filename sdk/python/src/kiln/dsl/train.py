"""Distributed training: the ``train:`` block of a workflow task and a
standalone TrainJob (Kubeflow Trainer v2 shape)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Union

from .refs import render

Quantity = Union[int, str]


class Train:
    """How a task runs as a training job: the runtime (``torch-distributed``,
    ``mpi``, ``xgboost``, ``tensorflow``, ``jax``, ``plain``, or a stored
    runtime's name) and the trainer's shape. The command is the task's: a
    ``kiln.command`` or a ``@kiln.task`` function, run in every process by the
    runtime's launcher (for torch-distributed, kiln starts each process with
    RANK, WORLD_SIZE, MASTER_ADDR... set)."""

    def __init__(self, runtime: str = "torch-distributed", *, num_nodes: Optional[int] = None,
                 num_proc_per_node: Optional[Quantity] = None,
                 resources_per_node: Optional[Mapping[str, Any]] = None, image: Optional[str] = None) -> None:
        if not runtime or not isinstance(runtime, str):
            raise ValueError("Train: runtime is the name of a training runtime, e.g. 'torch-distributed'")
        if num_nodes is not None and (not isinstance(num_nodes, int) or num_nodes < 1):
            raise ValueError(f"Train: num_nodes is a positive int, not {num_nodes!r}")
        self.runtime = runtime
        self.num_nodes = num_nodes
        self.num_proc_per_node = num_proc_per_node
        self.resources_per_node = dict(resources_per_node) if resources_per_node else None
        self.image = image

    def trainer_fields(self, command: List[str], args: List[str],
                       env: Optional[List[Dict[str, str]]]) -> Dict[str, Any]:
        """The Trainer fields (camelCase) for command, args and env."""
        out: Dict[str, Any] = {"command": command}
        if args:
            out["args"] = args
        if env:
            out["env"] = env
        if self.num_nodes is not None:
            out["numNodes"] = self.num_nodes
        if self.num_proc_per_node is not None:
            out["numProcPerNode"] = self.num_proc_per_node
        if self.resources_per_node:
            out["resourcesPerNode"] = {k: str(v) for k, v in self.resources_per_node.items()}
        if self.image:
            out["image"] = self.image
        return out

    def block(self, command: List[str], args: List[str], env: Optional[List[Dict[str, str]]]) -> Dict[str, Any]:
        """The task's ``train:`` block."""
        return {"runtime": self.runtime, **self.trainer_fields(command, args, env)}


def run_policy(value: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """A run policy with snake_case or camelCase keys, as kiln's camelCase."""
    if not value:
        return None
    names = {"backoff_limit": "backoffLimit", "active_deadline_seconds": "activeDeadlineSeconds",
             "ttl_seconds_after_finished": "ttlSecondsAfterFinished", "clean_pod_policy": "cleanPodPolicy"}
    return {names.get(k, k): v for k, v in value.items()}


def literal_args(values: Mapping[str, Any], where: str) -> Dict[str, str]:
    """Literal keyword values of a TrainJob's function, rendered."""
    return {k: render(v, f"{where} argument {k}") for k, v in values.items()}
