"""The type variables of the decorators: a task or workflow keeps its
function's parameters (P) and return type (R), so a type checker checks a
call's arguments by name and type."""

from __future__ import annotations

import datetime
import sys
from typing import TYPE_CHECKING, Any, Mapping, TypeVar, Union

if TYPE_CHECKING:
    from typing_extensions import ParamSpec
elif sys.version_info >= (3, 10):
    from typing import ParamSpec
else:  # Python 3.9 runs without typing_extensions: a TypeVar stands in at run time
    ParamSpec = TypeVar

#: A decorated function's parameters.
P = ParamSpec("P")
#: A decorated function's return type.
R = TypeVar("R")

#: A duration: text such as "10m", seconds, or a timedelta.
Duration = Union[str, int, float, datetime.timedelta]
#: Resources: cpu, memory and gpu quantities.
Resources = Mapping[str, Union[str, int, float]]
#: Retries: a limit, or {"limit": 2, "backoff": {...}}.
Retries = Union[int, Mapping[str, Any]]
#: Cache: a version, or {"version": "1", "max_age": "24h"}; False for none.
Cache = Union[str, int, bool, Mapping[str, Any]]

