"""Annotations and constants for task functions: artifact paths and the
outputs directory."""

from __future__ import annotations

from typing import Optional

#: The directory a task writes its outputs into, as a template kiln expands
#: (``{{outputs.dir}}``); ``KILN_OUTPUTS`` in the task's environment holds the same.
OUTPUTS_DIR = "{{outputs.dir}}"


class InputPath(str):
    """Marks a task function's parameter as an input artifact: the function
    receives the path (a ``str``) of a file or directory, usually an upstream
    task's output artifact.

    ``def train(data: kiln.InputPath, lr: float) -> float: ...``

    It is a ``str``, so a type checker accepts ``open(data)`` in the body.
    """


class OutputPath(str):
    """Marks a task function's parameter as an output artifact: the function
    receives the path (a ``str``) where it must write the artifact, a file or
    a directory in the task's outputs directory; downstream tasks read it as
    ``handle.outputs.NAME``.

    Annotate the parameter with the class and give it an instance as its
    default, naming the file, or empty for a file named after the parameter:
    ``model: kiln.OutputPath = kiln.OutputPath("model.pt")``. The default
    lets a workflow call the task without the argument (kiln passes the path
    at run time), as a type checker then accepts. The older spelling with an
    instance as the annotation (``model: kiln.OutputPath("model.pt")``) still
    compiles, but type checkers refuse a call in an annotation.
    """

    def __new__(cls, filename: Optional[str] = None) -> "OutputPath":
        return super().__new__(cls, filename or "")

    @property
    def filename(self) -> Optional[str]:
        """The artifact's file name in the outputs directory (None: the parameter's name)."""
        return str(self) or None

    def __repr__(self) -> str:
        return f"OutputPath({self.filename!r})"
