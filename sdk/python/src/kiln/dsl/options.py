"""A task's options (resources, retries, timeout, cache, env...), checked
when the task is declared and written in the YAML's field order."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from .refs import duration, render

_KEYS = ("image", "resources", "retries", "timeout", "cache", "env", "working_dir", "priority",
         "admission_timeout", "when", "trigger", "depends", "dynamic", "extra", "python", "train")


def _resources(value: Any, where: str) -> Optional[Dict[str, str]]:
    """``{cpu, memory, gpu}`` with every quantity as a string."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: resources is a dict such as {{'cpu': '500m', 'memory': '1Gi', 'gpu': 1}}")
    unknown = set(value) - {"cpu", "memory", "gpu"}
    if unknown:
        raise ValueError(f"{where}: resources take cpu, memory and gpu, not {', '.join(sorted(unknown))}")
    return {k: str(value[k]) for k in ("cpu", "memory", "gpu") if value.get(k) is not None}


def _retries(value: Any, where: str) -> Optional[Dict[str, Any]]:
    """An int (the limit) or the YAML's ``{limit, backoff: {duration, factor, max}}``."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return {"limit": value}
    if isinstance(value, Mapping) and "limit" in value:
        out: Dict[str, Any] = {"limit": value["limit"]}
        if value.get("backoff"):
            b = dict(value["backoff"])
            out["backoff"] = {k: (duration(b[k], where) if k != "factor" else b[k])
                              for k in ("duration", "factor", "max") if b.get(k) is not None}
        return out
    raise TypeError(f"{where}: retries is a limit (an int) or {{'limit': 2, 'backoff': {{'duration': '1s', "
                    "'factor': 2, 'max': '10s'}}")


def _cache(value: Any, where: str) -> Optional[Dict[str, Any]]:
    """A version (str or int) or the YAML's ``{version, maxAge}``."""
    if value is None or value is False:
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return {"version": str(value)}
    if isinstance(value, Mapping):
        out = {"version": str(value["version"])} if "version" in value else {}
        if value.get("max_age", value.get("maxAge")):
            out["maxAge"] = duration(value.get("max_age", value.get("maxAge")), where)
        return out
    raise TypeError(f"{where}: cache is a version such as '1' or {{'version': '1', 'max_age': '24h'}}")


def _dynamic(value: Any, where: str) -> Optional[Dict[str, Any]]:
    """The output holding a dynamic task's fragment, or the YAML's ``{output, workflows}``."""
    if value is None:
        return None
    if isinstance(value, str):
        return {"output": value}
    if isinstance(value, Mapping) and "output" in value:
        return dict(value)
    raise TypeError(f"{where}: dynamic names the output holding the fragment, e.g. dynamic='fragment'")


def env_list(value: Any, where: str) -> Optional[List[Dict[str, str]]]:
    """A dict of name to value (params and outputs allowed) as kiln's env list."""
    if not value:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: env is a dict of name to value")
    return [{"name": str(k), "value": render(v, f"{where} env {k}")} for k, v in value.items()]


class Options:
    """The options of a task, as given to the decorator (or ``with_overrides``)."""

    def __init__(self, where: str, **given: Any) -> None:
        self.where = where
        self.check_keys(given, where)
        self.values = given
        self.to_fields(given)  # fail now, at definition, on a bad value

    @staticmethod
    def check_keys(given: Mapping[str, Any], where: str) -> None:
        """Raises TypeError on an option kiln's tasks do not have."""
        unknown = [k for k in given if k not in _KEYS]
        if unknown:
            raise TypeError(f"{where}: unknown option(s) {', '.join(unknown)} (options: {', '.join(_KEYS)})")

    def to_fields(self, overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """The task's YAML fields these options set (overrides win), in kiln's order,
        env apart (under ``env`` as a dict, placed by the caller)."""
        v = dict(self.values, **(overrides or {}))
        w = self.where
        fields = {
            "workingDir": v.get("working_dir"),
            "retries": _retries(v.get("retries"), w),
            "timeout": duration(v.get("timeout"), w),
            "resources": _resources(v.get("resources"), w),
            "admissionTimeout": duration(v.get("admission_timeout"), w),
            "priority": v.get("priority"),
            "image": v.get("image"),
            "when": v.get("when"),
            "trigger": v.get("trigger"),
            "depends": v.get("depends"),
            "dynamic": _dynamic(v.get("dynamic"), w),
            "cache": _cache(v.get("cache"), w),
        }
        out = {k: x for k, x in fields.items() if x is not None}
        out.update(v.get("extra") or {})
        return out

    def env(self, overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """The env given as an option (a dict), overrides merged in."""
        env = dict(self.values.get("env") or {})
        env.update((overrides or {}).get("env") or {})
        return env
