"""Typed views of what the kiln API returns.

Every class is built leniently from the API's JSON with ``from_json``:
every property of the API's schema (api/openapi/openapi.json) is a
snake_case attribute, timestamps become aware ``datetime`` values, nested
objects the package does not model stay dicts, and only keys a newer
server adds land in ``extra`` rather than being refused.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, ClassVar, Dict, List, Mapping, Optional, Type, TypeVar

#: The phases in which a run (or a node) has ended.
FINAL_PHASES = frozenset({"Succeeded", "Failed", "Cancelled", "Skipped"})

_FRACTION = re.compile(r"^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", re.IGNORECASE)
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")

T = TypeVar("T")


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 timestamp (Go writes up to nanoseconds) as an aware
    datetime; None for None or "". Python's ``fromisoformat`` before 3.11
    reads neither ``Z`` nor more than six fractional digits, so the text is
    normalised first (nanoseconds are cut to microseconds)."""
    if not value:
        return None
    m = _FRACTION.match(value)
    if not m:
        raise ValueError(f"{value!r} is not an RFC 3339 time")
    base, frac, zone = m.groups()
    text = base + ("." + (frac + "000000")[:6] if frac else "")
    text += "+00:00" if zone.upper() == "Z" else zone
    return datetime.fromisoformat(text)


def format_time(value: datetime) -> str:
    """value as RFC 3339 in UTC, as the server reads it (naive is UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def _build(cls: Type[T], data: Optional[Mapping[str, Any]], convert: Mapping[str, Callable[[Any], Any]]) -> T:
    """cls from data: known keys (in snake case) through convert, the rest in extra."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs: Dict[str, Any] = {}
    extra: Dict[str, Any] = {}
    for key, value in (data or {}).items():
        name = _snake(key)
        if name in names and name != "extra":
            kwargs[name] = convert[name](value) if name in convert and value is not None else value
        else:
            extra[key] = value
    return cls(**kwargs, extra=extra)  # type: ignore[call-arg]


class _Model:
    """A dataclass read leniently from the API's JSON: its keys, in snake
    case, converted as _convert says; unknown keys kept in ``extra``."""

    _convert: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    @classmethod
    def from_json(cls: Type[T], data: Mapping[str, Any]) -> T:
        """An instance from the API's JSON."""
        return _build(cls, data, cls._convert)  # type: ignore[attr-defined]


def _list(cls: Any) -> Callable[[Any], list]:
    return lambda items: [cls.from_json(x) for x in items or []]


@dataclass
class AttemptStatus(_Model):
    """One try of a task: its processes' outcome."""

    number: int = 0
    id: str = ""
    phase: str = ""
    exit_code: Optional[int] = None
    signal: str = ""
    code: str = ""
    message: str = ""
    system: bool = False
    started_at: Optional[datetime] = None
    finished_at: Optional[datetime] = None
    nodes: int = 0
    joined: int = 0
    dropped: List[str] = field(default_factory=list)
    #: Bytes each log ("stdout", "stderr", a gang's "<process>.stdout")
    #: could not hold because the disk was full (KLN-6011); empty when none.
    logs_lost: Dict[str, int] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)

    _convert = {"started_at": parse_time, "finished_at": parse_time}


@dataclass
class GateStatus(_Model):
    """What a gate task (approval, signal, sleep) or a sensor waits for and
    what it got; ``next_look`` is when a sensor looks again."""

    kind: str = ""
    message: str = ""
    type: str = ""
    waiting_since: Optional[datetime] = None
    wake_at: Optional[datetime] = None
    next_look: Optional[datetime] = None
    sleep_until: Optional[datetime] = None
    decision: str = ""
    value: str = ""
    by: str = ""
    reason: str = ""
    at: Optional[datetime] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    _convert = {t: parse_time for t in ("waiting_since", "wake_at", "next_look", "sleep_until", "at")}


@dataclass
class NodeStatus(_Model):
    """One task (node) of a run: its phase, outputs and attempts."""

    name: str = ""
    phase: str = ""
    code: str = ""
    message: str = ""
    kind: str = ""
    parent: str = ""
    started_at: Optional[datetime] = None
    finished_at: Optional[datetime] = None
    retry_at: Optional[datetime] = None
    outputs: Dict[str, str] = field(default_factory=dict)
    #: What the task's {{...}} references resolved to, by reference ("params.lr": "0.1").
    inputs: Dict[str, str] = field(default_factory=dict)
    attempts: List[AttemptStatus] = field(default_factory=list)
    conditions: List[Dict[str, Any]] = field(default_factory=list)
    gate: Optional[GateStatus] = None
    #: Attempts of earlier tries of a retried run (not counted against retries).
    attempt_base: int = 0
    #: What the cache did: result (Hit, Miss, Stored, ...), key, sourceRun, ...
    cache: Optional[Dict[str, Any]] = None
    #: A map's, dynamic or subworkflow task's children by phase (total, succeeded, ...).
    children: Optional[Dict[str, Any]] = None
    #: What a map, dynamic or subworkflow task expanded into, as the server keeps it.
    expansion: Any = None
    #: A federated task's shares at each party.
    parties: List[Dict[str, Any]] = field(default_factory=list)
    #: A training job's process counts per replica group (name, active, pending, succeeded, ...).
    replicas: List[Dict[str, Any]] = field(default_factory=list)
    #: The output artifacts the task stored in the artifact repository (name, path, digest, size, files).
    artifacts: List[Dict[str, Any]] = field(default_factory=list)
    #: Where a rerun's reused result comes from: run, node, attempt.
    reused: Optional[Dict[str, Any]] = None
    #: What a training job reports of its progress (progressPercentage, metrics, ...).
    trainer_status: Optional[Dict[str, Any]] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        why = f", code={self.code!r}, message={self.message!r}" if self.code else ""
        return (f"NodeStatus(name={self.name!r}, phase={self.phase!r}, attempts={len(self.attempts)}, "
                f"outputs={self.outputs!r}{why})")

    _convert = {
        "started_at": parse_time, "finished_at": parse_time, "retry_at": parse_time,
        "attempts": _list(AttemptStatus), "gate": GateStatus.from_json,
    }

    @property
    def done(self) -> bool:
        """Whether the node has ended."""
        return self.phase in FINAL_PHASES


@dataclass
class RunOutputs(_Model):
    """A workflow's outputs: parameters (name to value) and artifacts (name to path)."""

    parameters: Dict[str, str] = field(default_factory=dict)
    artifacts: Dict[str, str] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RunProgress(_Model):
    """How many of a run's tasks there are and how many have ended."""

    total: int = 0
    done: int = 0
    succeeded: int = 0
    failed: int = 0
    skipped: int = 0
    cancelled: int = 0
    running: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class SuspendedTime(_Model):
    """The time a run spent suspended, which its timeout does not count:
    ``seconds`` in all before ``since``, when the current suspension began
    (None while the run is not suspended)."""

    since: Optional[datetime] = None
    seconds: float = 0.0
    extra: Dict[str, Any] = field(default_factory=dict)

    _convert = {"since": parse_time}


@dataclass
class RunStatus(_Model):
    """Where a run stands: its phase, why, and its nodes."""

    phase: str = ""
    code: str = ""
    message: str = ""
    started_at: Optional[datetime] = None
    finished_at: Optional[datetime] = None
    nodes: List[NodeStatus] = field(default_factory=list)
    outputs: Optional[RunOutputs] = None
    progress: Optional[RunProgress] = None
    suspended: Optional[SuspendedTime] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    _convert = {
        "started_at": parse_time, "finished_at": parse_time, "nodes": _list(NodeStatus),
        "outputs": RunOutputs.from_json, "progress": RunProgress.from_json,
        "suspended": SuspendedTime.from_json,
    }


@dataclass
class Run(_Model):
    """One run of a Workflow or TrainJob. ``workflow`` and the rest of the
    stored spec stay JSON (dicts), as the server sent them."""

    id: str = ""
    name: str = ""
    kind: str = ""
    project: str = ""
    labels: Dict[str, str] = field(default_factory=dict)
    params: Dict[str, str] = field(default_factory=dict)
    created_at: Optional[datetime] = None
    suspend: bool = False
    cache: str = ""
    work_dir: str = ""
    source: str = ""
    rerun_of: Optional[Dict[str, Any]] = None
    workflow: Optional[Dict[str, Any]] = None
    status: RunStatus = field(default_factory=RunStatus)
    #: How a federated run takes part: initiator, party, run, roles, shares.
    federation: Optional[Dict[str, Any]] = None
    #: The workflows the run's subworkflow tasks run, as submitted.
    subworkflows: List[Dict[str, Any]] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """Short, for a notebook: id, name, phase (and why), progress and outputs."""
        p = self.status.progress
        progress = f"{p.done}/{p.total}" if p else "-"
        why = f", code={self.status.code!r}" if self.status.code else ""
        return (f"Run(id={self.id!r}, name={self.name!r}, phase={self.phase!r}{why}, "
                f"progress={progress!r}, outputs={self.outputs!r})")

    _convert = {"created_at": parse_time, "status": RunStatus.from_json}

    @property
    def phase(self) -> str:
        """The run's phase (Pending, Running, Succeeded, Failed, ...)."""
        return self.status.phase

    @property
    def done(self) -> bool:
        """Whether the run has ended (Succeeded, Failed or Cancelled)."""
        return self.status.phase in FINAL_PHASES

    @property
    def succeeded(self) -> bool:
        """Whether the run has ended and succeeded."""
        return self.status.phase == "Succeeded"

    @property
    def outputs(self) -> Dict[str, str]:
        """The workflow's output parameters; empty when it has none."""
        return dict(self.status.outputs.parameters) if self.status.outputs else {}

    def node(self, name: str) -> NodeStatus:
        """The node called name; KeyError naming the nodes there are if none is."""
        for n in self.status.nodes:
            if n.name == name:
                return n
        names = ", ".join(n.name for n in self.status.nodes) or "none"
        raise KeyError(f"run {self.id} has no node {name!r} (its nodes: {names})")


@dataclass
class RunList(_Model):
    """A page of runs and the cursor of the next page ("" on the last)."""

    items: List[Run] = field(default_factory=list)
    next: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)

    _convert = {"items": _list(Run)}


@dataclass
class Event(_Model):
    """One thing that happened to a run, numbered by ``seq`` within it."""

    seq: int = 0
    run: str = ""
    node: str = ""
    attempt: int = 0
    phase: str = ""
    reason: str = ""
    code: str = ""
    message: str = ""
    time: Optional[datetime] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    _convert = {"time": parse_time}


@dataclass
class RunRequested(_Model):
    """The answer to cancel and retry: the engine acts on the request in its next round."""

    run: str = ""
    requested: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RunSuspension(_Model):
    """The answer to suspend and unsuspend: what the run's ``suspend`` was set to."""

    run: str = ""
    suspend: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RunDeleted(_Model):
    """The answer to delete: ``deleted`` is always True."""

    run: str = ""
    deleted: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class GateSent(_Model):
    """The answer to approve, reject and signal: which gate, what was sent
    (approve, reject or signal) and by whom."""

    run: str = ""
    task: str = ""
    sent: str = ""
    by: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RunChange:
    """One message of a watch of runs: ``type`` "run" with the run as it is
    now, or "deleted" with ``run_id`` alone. ``id`` resumes a watch."""

    type: str
    id: str
    run: Optional[Run] = None
    run_id: str = ""


@dataclass
class Resource(_Model):
    """A Kubernetes-shaped object (TrainingRuntime, WorkflowTemplate,
    Schedule, ProjectQuota): metadata, spec and status stay JSON."""

    api_version: str = ""
    kind: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)
    spec: Dict[str, Any] = field(default_factory=dict)
    status: Optional[Dict[str, Any]] = None
    extra: Dict[str, Any] = field(default_factory=dict)


    @property
    def name(self) -> str:
        """metadata.name."""
        return str(self.metadata.get("name", ""))


class TrainingRuntime(Resource):
    """A TrainingRuntime or ClusterTrainingRuntime (built in or stored)."""


class WorkflowTemplate(Resource):
    """A stored WorkflowTemplate."""


class Schedule(Resource):
    """A Schedule: a workflow run on a cron line."""


class ProjectQuota(Resource):
    """A ProjectQuota: the share of the machine a project may use."""


@dataclass
class Secret:
    """A secret's name in a project; values never leave the server."""

    name: str
    project: str


@dataclass
class WhoAmI(_Model):
    """Who the server takes the token for; ``authenticated`` is False without a valid one."""

    name: str = ""
    role: str = ""
    projects: List[str] = field(default_factory=list)
    authenticated: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Version(_Model):
    """The server's build: version, commit, Go version and platform."""

    version: str = ""
    commit: str = ""
    modified: bool = False
    time: str = ""
    go: str = ""
    platform: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def to_json(obj: Any) -> Any:
    """obj (a model, or lists and dicts of them) as the API's JSON again:
    camelCase keys, RFC 3339 times, ``extra`` merged back, empty fields left out."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.name == "extra":
                out.update(to_json(value))
            elif value not in (None, "", [], {}) or f.name in ("phase", "id", "name"):
                out[_camel(f.name)] = to_json(value)
        return out
    if isinstance(obj, datetime):
        return format_time(obj)
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    return obj
