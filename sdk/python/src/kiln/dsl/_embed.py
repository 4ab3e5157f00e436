"""Embedding a Python function in a task's command, as KFP lightweight
components do: the function's source and a small generated entry that parses
the arguments, calls it and writes its outputs."""

from __future__ import annotations

import ast
import builtins
import dis
import inspect
import textwrap
import types
from typing import Dict, List

# The entry that follows the function in the program. It reads
# ``--name value`` pairs, converts each to the parameter's type, calls the
# function, and writes its return value to $KILN_OUTPUTS/<name>. In a
# training job every process runs it and only rank 0 writes the outputs.
_ENTRY = '''

def _kiln_main(argv):
    import os
    import sys
    types = {types!r}
    outputs = {outputs!r}
    artifacts = {artifacts!r}
    kwargs = {{}}
    for i in range(0, len(argv), 2):
        name, text = argv[i][2:], argv[i + 1]
        kind = types[name]
        if kind == "bool":
            low = text.strip().lower()
            if low not in ("true", "false", "1", "0", "yes", "no"):
                sys.exit("parameter %s: %r is not a bool" % (name, text))
            kwargs[name] = low in ("true", "1", "yes")
        elif kind == "int":
            kwargs[name] = int(text)
        elif kind == "float":
            kwargs[name] = float(text)
        else:
            kwargs[name] = text
    out = os.environ.get("KILN_OUTPUTS", ".")
    for name, filename in artifacts.items():
        kwargs[name] = os.path.join(out, filename)
    result = {func}(**kwargs)
    for var in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "DMLC_TASK_ID", "JAX_PROCESS_ID"):
        if os.environ.get(var, "0") != "0":
            return
    if not outputs:
        return
    if len(outputs) == 1 and not isinstance(result, (tuple, dict)):
        result = (result,)
    for i, name in enumerate(outputs):
        value = result[name] if isinstance(result, dict) else result[i]
        if isinstance(value, bool):
            value = "true" if value else "false"
        with open(os.path.join(out, name), "w") as f:
            f.write(str(value))


if __name__ == "__main__":
    _kiln_main(__import__("sys").argv[1:])
'''


class EmbedError(ValueError):
    """A function that cannot run on its own in a task, with why and what to do."""


def _code_objects(code: types.CodeType) -> List[types.CodeType]:
    """code and every code object nested in it (inner functions, comprehensions)."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_code_objects(const))
    return found


def _globals_read(fn: types.FunctionType) -> List[str]:
    """The global names fn's body reads, in first-use order."""
    names: List[str] = []
    for code in _code_objects(fn.__code__):
        for ins in dis.get_instructions(code):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval not in names:
                names.append(ins.argval)
    return names


def check_self_contained(fn: types.FunctionType, what: str) -> None:
    """Raises EmbedError unless fn can run from its source alone."""
    if fn.__name__ == "<lambda>":
        raise EmbedError(f"{what}: a lambda cannot be a task; write a def with its imports inside it")
    if fn.__code__.co_freevars:
        raise EmbedError(
            f"{what}: the function reads {', '.join(fn.__code__.co_freevars)} from the function around it; "
            "a task's function runs alone in another process: pass the value as a parameter"
        )
    outside = [n for n in _globals_read(fn) if n != fn.__name__ and not hasattr(builtins, n) and not n.startswith("@")]
    if outside:
        raise EmbedError(
            f"{what}: the function reads the global name(s) {', '.join(outside)}; a task's function runs "
            "alone in another process: import modules inside the function and pass values as parameters"
        )


def function_source(fn: types.FunctionType, what: str) -> str:
    """fn's source without its decorators, dedented."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise EmbedError(
            f"{what}: cannot read the function's source ({e}); define it in a file or a notebook cell"
        ) from e
    node = ast.parse(src).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or isinstance(node, ast.AsyncFunctionDef):
        raise EmbedError(f"{what}: only a plain def can be a task")
    lines = src.splitlines()
    return "\n".join(lines[node.lineno - 1:]).rstrip() + "\n"


def program(fn: types.FunctionType, what: str, params: Dict[str, str], outputs: List[str],
            artifacts: Dict[str, str]) -> str:
    """The Python program of a task: fn's source and the entry calling it.

    params maps each parameter given on the command line to its type's name
    (str, int, float, bool); artifacts maps output-artifact parameters to the
    file they get in the outputs directory; outputs names the return values.
    """
    check_self_contained(fn, what)
    src = function_source(fn, what)
    entry = _ENTRY.format(types=params, outputs=outputs, artifacts=artifacts, func=fn.__name__)
    return "from __future__ import annotations\n\n" + src + entry
