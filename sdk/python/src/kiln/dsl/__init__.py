"""Writing kiln pipelines in Python: tasks, workflows, training jobs, and
running them with one call (on a server, or locally with the kiln binary)."""

from __future__ import annotations

from ..errors import KilnError
from .refs import Output, Param, TaskCall
from .runner import run
from .task import CommandTask, FunctionTask, command, task
from .train import Train
from .trainjob import TrainJob
from .paths import OUTPUTS_DIR, InputPath, OutputPath
from .workflow import Workflow, workflow
from .control import WORKFLOW_FAILURES, WORKFLOW_STATUS, Item, condition, for_each, gate, on_exit, template
from .refs import Condition

__all__ = [
    "OUTPUTS_DIR",
    "WORKFLOW_FAILURES",
    "WORKFLOW_STATUS",
    "Condition",
    "Item",
    "condition",
    "for_each",
    "gate",
    "on_exit",
    "template",
    "CommandTask",
    "FunctionTask",
    "InputPath",
    "KilnError",
    "Output",
    "OutputPath",
    "Param",
    "TaskCall",
    "Train",
    "TrainJob",
    "Workflow",
    "command",
    "run",
    "task",
    "workflow",
]
