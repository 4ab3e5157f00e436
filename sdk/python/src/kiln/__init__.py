"""kiln: write, submit and follow kiln pipelines and training jobs from Python.

Pipelines are written with :func:`task`, :func:`command` and
:func:`workflow` (and :class:`TrainJob` and :class:`Train` for training)
and compile to the YAML ``kiln validate`` accepts; :func:`run` runs one
with a call. The client of a kiln server (``kiln serve``) is
:class:`Client`; what it returns are the dataclasses of
:mod:`kiln.models`; what goes wrong is a :class:`KilnError` with the
server's ``KLN-xxxx`` code.
"""

from __future__ import annotations

from .client import Client
from .dsl import (
    OUTPUTS_DIR,
    WORKFLOW_FAILURES,
    WORKFLOW_STATUS,
    Condition,
    Item,
    condition,
    for_each,
    gate,
    on_exit,
    template,
    InputPath,
    OutputPath,
    Train,
    TrainJob,
    Workflow,
    command,
    run,
    task,
    workflow,
)
from .errors import KilnError
from .models import (
    AttemptStatus,
    Event,
    GateSent,
    GateStatus,
    NodeStatus,
    ProjectQuota,
    Resource,
    Run,
    RunChange,
    RunDeleted,
    RunList,
    RunOutputs,
    RunProgress,
    RunRequested,
    RunStatus,
    RunSuspension,
    Schedule,
    Secret,
    SuspendedTime,
    TrainingRuntime,
    Version,
    WhoAmI,
    WorkflowTemplate,
)

__version__ = "0.1.0"

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
    "AttemptStatus",
    "Client",
    "Event",
    "GateSent",
    "GateStatus",
    "InputPath",
    "KilnError",
    "NodeStatus",
    "OutputPath",
    "ProjectQuota",
    "Resource",
    "Run",
    "RunChange",
    "RunDeleted",
    "RunList",
    "RunOutputs",
    "RunProgress",
    "RunRequested",
    "RunStatus",
    "RunSuspension",
    "Schedule",
    "Secret",
    "SuspendedTime",
    "Train",
    "TrainJob",
    "TrainingRuntime",
    "Version",
    "WhoAmI",
    "Workflow",
    "WorkflowTemplate",
    "command",
    "run",
    "task",
    "workflow",
]
