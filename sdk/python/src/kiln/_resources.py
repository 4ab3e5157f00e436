"""The client's calls on what is stored beside runs: secrets, runtimes,
templates, the cache, schedules, quotas, parties, and the server itself."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._http import api_path as _path
from ._http import multipart
from ._source import Spec
from .models import ProjectQuota, Schedule, Secret, TrainingRuntime, Version, WhoAmI, WorkflowTemplate


class Resources:
    """Calls that Client gains; they use its plumbing (``_call`` and the rest)."""

    # Provided by Client.
    def _call(self, method: str, path: str, query: Optional[Mapping[str, Any]] = None,
              body: Optional[bytes] = None, content_type: str = "",
              headers: Optional[Mapping[str, str]] = None) -> Any:
        raise NotImplementedError

    def _json_body(self, method: str, path: str, body: Any, query: Optional[Mapping[str, Any]] = None) -> Any:
        raise NotImplementedError

    def _project(self, project: Optional[str]) -> Optional[str]:
        raise NotImplementedError

    def _files(self, spec: Union[Spec, Sequence[Spec]]) -> List[Tuple[str, bytes]]:
        raise NotImplementedError

    def _in(self, project: Optional[str], **more: Any) -> Dict[str, Any]:
        return {"project": self._project(project), **more}

    # --- the server -------------------------------------------------------------

    def whoami(self) -> WhoAmI:
        """Who the server takes the token for (``authenticated`` False without a valid one)."""
        return WhoAmI.from_json(self._call("GET", _path("whoami")))

    def version(self) -> Version:
        """The server's build."""
        return Version.from_json(self._call("GET", _path("version")))

    def openapi(self) -> Dict[str, Any]:
        """The server's OpenAPI document."""
        return self._call("GET", _path("openapi.json"))

    # --- secrets ------------------------------------------------------------------

    def secrets(self, project: Optional[str] = None) -> List[Secret]:
        """A project's secrets, by name; values never leave the server."""
        data = self._call("GET", _path("secrets"), self._in(project))
        return [Secret(name, data.get("project", "")) for name in data.get("items") or []]

    def put_secret(self, name: str, value: Union[str, bytes], project: Optional[str] = None) -> None:
        """Sets (creates or replaces) a secret of the project."""
        body = value.encode("utf-8") if isinstance(value, str) else value
        self._call("PUT", _path("secrets", name), self._in(project), body, "application/octet-stream")

    def delete_secret(self, name: str, project: Optional[str] = None) -> None:
        """Removes a secret of the project; KLN-4011 when it has none of that name."""
        self._call("DELETE", _path("secrets", name), self._in(project))

    # --- training runtimes and apply ------------------------------------------------

    def runtimes(self, project: Optional[str] = None) -> List[TrainingRuntime]:
        """The training runtimes a project's TrainJobs may use: built in and stored."""
        data = self._call("GET", _path("runtimes"), self._in(project))
        return [TrainingRuntime.from_json(x) for x in data.get("items") or []]

    def get_runtime(self, name: str, project: Optional[str] = None, kind: Optional[str] = None,
                    version: Optional[int] = None) -> TrainingRuntime:
        """One runtime; kind is TrainingRuntime or ClusterTrainingRuntime (default: lookup order)."""
        query = self._in(project, kind=kind, version=version)
        return TrainingRuntime.from_json(self._call("GET", _path("runtimes", name), query))

    def delete_runtime(self, name: str, project: Optional[str] = None, kind: Optional[str] = None,
                       version: Optional[int] = None) -> None:
        """Deletes a stored runtime (a built-in one is KLN-4029)."""
        self._call("DELETE", _path("runtimes", name), self._in(project, kind=kind, version=version))

    def apply(self, spec: Union[Spec, Sequence[Spec]], project: Optional[str] = None) -> Dict[str, Any]:
        """Applies the documents of spec (one or a list) as ``kiln apply``
        does: stores the TrainingRuntimes, WorkflowTemplates, Schedules and
        ProjectQuotas, then submits the Workflows and TrainJobs (each
        submitted run is an item with ``action: submitted`` and its ``run``
        ID). Nothing is stored when any document is invalid."""
        body, ctype = multipart(self._files(spec), {"project": [p for p in [self._project(project)] if p]})
        return self._call("POST", _path("apply"), body=body, content_type=ctype)

    # --- templates --------------------------------------------------------------------

    def apply_templates(self, spec: Union[Spec, Sequence[Spec]], project: Optional[str] = None) -> List[WorkflowTemplate]:
        """Stores WorkflowTemplates and returns them as stored."""
        body, ctype = multipart(self._files(spec), {"project": [p for p in [self._project(project)] if p]})
        data = self._call("POST", _path("templates"), body=body, content_type=ctype)
        return [WorkflowTemplate.from_json(x) for x in data.get("items") or []]

    def put_template(self, name: str, spec: Spec, project: Optional[str] = None) -> WorkflowTemplate:
        """Stores one WorkflowTemplate under name."""
        (fname, data), = self._files(spec)
        query = self._in(project, file=fname)
        return WorkflowTemplate.from_json(self._call("PUT", _path("templates", name), query, data, "application/yaml"))

    def templates(self, project: Optional[str] = None) -> List[WorkflowTemplate]:
        """A project's stored templates."""
        data = self._call("GET", _path("templates"), self._in(project))
        return [WorkflowTemplate.from_json(x) for x in data.get("items") or []]

    def get_template(self, name: str, project: Optional[str] = None) -> WorkflowTemplate:
        """One stored template; KLN-4015 when there is none."""
        return WorkflowTemplate.from_json(self._call("GET", _path("templates", name), self._in(project)))

    def delete_template(self, name: str, project: Optional[str] = None) -> None:
        """Removes a stored template; KLN-4015 when there is none."""
        self._call("DELETE", _path("templates", name), self._in(project))

    # --- cache ----------------------------------------------------------------------------

    def cache_entries(self, project: Optional[str] = None, workflow: Optional[str] = None,
                      task: Optional[str] = None) -> List[Dict[str, Any]]:
        """The cache's entries (JSON objects: key, workflow, task, sourceRun, size, ...)."""
        data = self._call("GET", _path("cache"), self._in(project, workflow=workflow, task=task))
        return list(data.get("items") or [])

    def delete_cache_entry(self, key: str, project: Optional[str] = None) -> Dict[str, Any]:
        """Removes one cache entry; KLN-4025 when no entry has key."""
        return self._call("DELETE", _path("cache", key), self._in(project))

    def prune_cache(self, project: Optional[str] = None, all: bool = False,  # noqa: A002 - the API's name
                    older_than: Optional[str] = None, max_size: Optional[str] = None) -> Dict[str, Any]:
        """Removes cache entries: all of them, those not used for older_than
        (a Go duration, "168h"), or the least recently used beyond max_size
        ("10Gi"); returns the entries and bytes removed."""
        body = {k: v for k, v in {"project": self._project(project), "all": all, "olderThan": older_than,
                                  "maxSize": max_size}.items() if v}
        return self._json_body("POST", _path("cache", "prune"), body)

    # --- schedules -------------------------------------------------------------------------

    def schedules(self, project: Optional[str] = None) -> List[Schedule]:
        """A project's schedules."""
        data = self._call("GET", _path("schedules"), self._in(project))
        return [Schedule.from_json(x) for x in data.get("items") or []]

    def get_schedule(self, name: str, project: Optional[str] = None) -> Schedule:
        """One schedule."""
        return Schedule.from_json(self._call("GET", _path("schedules", name), self._in(project)))

    def delete_schedule(self, name: str, project: Optional[str] = None) -> None:
        """Removes a schedule."""
        self._call("DELETE", _path("schedules", name), self._in(project))

    def suspend_schedule(self, name: str, project: Optional[str] = None, suspend: bool = True) -> Schedule:
        """Stops (or, with suspend=False, restarts) a schedule's ticks."""
        verb = "suspend" if suspend else "unsuspend"
        return Schedule.from_json(self._call("POST", _path("schedules", name, verb), self._in(project)))

    # --- quotas and parties (admin) -----------------------------------------------------------

    def quotas(self) -> List[ProjectQuota]:
        """The ProjectQuotas of the projects the token may read."""
        data = self._call("GET", _path("quotas"))
        return [ProjectQuota.from_json(x) for x in data.get("items") or []]

    def delete_quota(self, name: str) -> None:
        """Removes a project's quota (a token of every project)."""
        self._call("DELETE", _path("quotas", name))

    def parties(self) -> Dict[str, Any]:
        """This server's party name and the parties it knows (admin): {"party", "items"}."""
        return self._call("GET", _path("parties"))

    def put_party(self, name: str, url: str, credential: Optional[str] = None, project: Optional[str] = None,
                  rotate: bool = False, no_check: bool = False) -> Dict[str, Any]:
        """Adds or changes a federation party (admin); the answer may hold a credential."""
        body = {k: v for k, v in {"name": name, "url": url, "credential": credential, "project": project,
                                  "rotate": rotate, "noCheck": no_check}.items() if v}
        return self._json_body("PUT", _path("parties", name), body)

    def delete_party(self, name: str) -> None:
        """Removes a federation party (admin)."""
        self._call("DELETE", _path("parties", name))
