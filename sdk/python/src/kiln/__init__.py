"""kiln: write, submit and follow kiln pipelines and training jobs from Python.

The client of a kiln server (``kiln serve``) is :class:`Client`; what it
returns are the dataclasses of :mod:`kiln.models`; what goes wrong is a
:class:`KilnError` with the server's ``KLN-xxxx`` code.
"""

from __future__ import annotations

from .client import Client
from .errors import KilnError
from .models import (
    AttemptStatus,
    Event,
    GateStatus,
    NodeStatus,
    ProjectQuota,
    Resource,
    Run,
    RunChange,
    RunList,
    RunOutputs,
    RunProgress,
    RunStatus,
    Schedule,
    Secret,
    TrainingRuntime,
    Version,
    WhoAmI,
    WorkflowTemplate,
)

__version__ = "0.1.0"

__all__ = [
    "AttemptStatus",
    "Client",
    "Event",
    "GateStatus",
    "KilnError",
    "NodeStatus",
    "ProjectQuota",
    "Resource",
    "Run",
    "RunChange",
    "RunList",
    "RunOutputs",
    "RunProgress",
    "RunStatus",
    "Schedule",
    "Secret",
    "TrainingRuntime",
    "Version",
    "WhoAmI",
    "WorkflowTemplate",
]
