"""Annotations and constants for task functions: artifact paths and the
outputs directory."""

from __future__ import annotations

from typing import Optional

#: The directory a task writes its outputs into, as a template kiln expands
#: (``{{outputs.dir}}``); ``KILN_OUTPUTS`` in the task's environment holds the same.
OUTPUTS_DIR = "{{outputs.dir}}"


class InputPath:
    """Marks a task function's parameter as an input artifact: the function
    receives the path (a ``str``) of a file or directory, usually an upstream
    task's output artifact.

    ``def train(data: kiln.InputPath, lr: float) -> float: ...``
    """


class OutputPath:
    """Marks a task function's parameter as an output artifact: the function
    receives the path (a ``str``) where it must write the artifact, a file or
    a directory in the task's outputs directory; downstream tasks read it as
    ``handle.outputs["NAME"]``.

    Use the class itself (the file is named after the parameter) or an
    instance naming the file: ``model: kiln.OutputPath("model.pt")``.
    """

    def __init__(self, filename: Optional[str] = None) -> None:
        self.filename = filename

    def __repr__(self) -> str:
        return f"OutputPath({self.filename!r})"
