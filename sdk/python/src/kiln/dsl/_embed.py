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
from typing import Dict, List, Optional, Tuple

# Pieces of the entry that follows the function in the program, each added
# only when the task's signature needs it.
_BOOL = '''
def _kiln_bool(name, text):
    if text.strip().lower() not in ("true", "false", "1", "0", "yes", "no"):
        raise SystemExit("parameter %s: %r is not a bool" % (name, text))
    return text.strip().lower() in ("true", "1", "yes")
'''
_TEXT = '''
def _kiln_write(name, value):
    with open(os.path.join(_kiln_out, name), "w") as f:
        f.write(("true" if value else "false") if isinstance(value, bool) else str(value))
'''
# In a training job every process runs the function; only rank 0 writes.
_RANKS = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "DMLC_TASK_ID", "JAX_PROCESS_ID")
_CONVERT = {"int": "int({})", "float": "float({})", "bool": "_kiln_bool({name!r}, {})"}


def _entry(func: str, params: Dict[str, str], outputs: List[str], artifacts: Dict[str, str],
           named: bool, training: bool) -> str:
    """The code after the function: parse ``--name value`` arguments, call
    it, write its return values to $KILN_OUTPUTS/NAME. named: the outputs
    are a NamedTuple's fields (a tuple or a dict by field name)."""
    head = ["", "import os" if outputs or artifacts else "", "import sys" if params else ""]
    head.append(_BOOL if "bool" in params.values() else "")
    head.append('_kiln_out = os.environ.get("KILN_OUTPUTS", ".")' if outputs or artifacts else "")
    head.append(_TEXT if outputs else "")
    kwargs = [f"{n}=" + _CONVERT.get(kind, "{}").format(f"_kiln_args[{'--' + n!r}]", name=n)
              for n, kind in params.items()]
    kwargs += [f"{n}=os.path.join(_kiln_out, {f!r})" for n, f in artifacts.items()]
    body = ["", 'if __name__ == "__main__":']
    if params:
        body.append("    _kiln_args = dict(zip(sys.argv[1::2], sys.argv[2::2]))")
    body.append(f"    {'result = ' if outputs else ''}{func}({', '.join(kwargs)})")
    if outputs:
        indent = "    "
        if training:
            body.append(f"    if all(os.environ.get(v, \"0\") == \"0\" for v in {_RANKS!r}):")
            indent = "        "
        if not named:
            body.append(f"{indent}_kiln_write({outputs[0]!r}, result)")
        else:
            if len(outputs) == 1:
                body.append(f"{indent}result = result if isinstance(result, (tuple, dict)) else (result,)")
            body.append(f"{indent}for i, name in enumerate({outputs!r}):")
            body.append(f"{indent}    _kiln_write(name, result[name] if isinstance(result, dict) else result[i])")
    return "\n\n" + "\n".join(line for line in head if line).strip() + "\n" + "\n".join(body) + "\n"


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


def check_self_contained(fn: types.FunctionType, what: str, allowed: Tuple[str, ...] = ()) -> None:
    """Raises EmbedError unless fn can run from its source alone (names in
    allowed are defined by the program)."""
    if fn.__name__ == "<lambda>":
        raise EmbedError(f"{what}: a lambda cannot be a task; write a def with its imports inside it")
    if fn.__code__.co_freevars:
        raise EmbedError(
            f"{what}: the function reads {', '.join(fn.__code__.co_freevars)} from the function around it; "
            "a task's function runs alone in another process: pass the value as a parameter"
        )
    outside = [n for n in _globals_read(fn)
               if n != fn.__name__ and n not in allowed and not hasattr(builtins, n) and not n.startswith("@")]
    if outside:
        raise EmbedError(
            f"{what}: the function reads the global name(s) {', '.join(outside)}; a task's function runs "
            "alone in another process: import modules inside the function and pass values as parameters "
            "(to return several values, return a plain tuple, a dict by output name, or the NamedTuple of "
            "the return annotation)"
        )


def _without_defaults(src: str, node: ast.FunctionDef, names: List[str]) -> str:
    """src with the default of each parameter in names replaced by None: an
    output artifact's default (``kiln.OutputPath("model.pt")``) names kiln,
    which the task's process need not have, and the entry passes the path."""
    args = node.args.posonlyargs + node.args.args
    pairs = list(zip(args[len(args) - len(node.args.defaults):], node.args.defaults))
    pairs += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
    spans = sorted(((d.lineno, d.col_offset, d.end_lineno or d.lineno, d.end_col_offset or 0)
                    for a, d in pairs if a.arg in names), reverse=True)
    lines = src.splitlines(keepends=True)
    for line, col, end_line, end_col in spans:
        head, tail = lines[line - 1].encode()[:col], lines[end_line - 1].encode()[end_col:]
        lines[line - 1:end_line] = [(head + b"None" + tail).decode()]
    return "".join(lines)


def function_source(fn: types.FunctionType, what: str, artifacts: Tuple[str, ...] = ()) -> str:
    """fn's source without its decorators, dedented; the defaults of the
    parameters named in artifacts are None."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise EmbedError(
            f"{what}: cannot read the function's source ({e}); define it in a file or a notebook cell"
        ) from e
    node = ast.parse(src).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or isinstance(node, ast.AsyncFunctionDef):
        raise EmbedError(f"{what}: only a plain def can be a task")
    start = node.lineno
    if artifacts:
        src = _without_defaults(src, node, list(artifacts))
        start = ast.parse(src).body[0].lineno
    lines = src.splitlines()
    return "\n".join(lines[start - 1:]).rstrip() + "\n"


def program(fn: types.FunctionType, what: str, params: Dict[str, str], outputs: List[str],
            artifacts: Dict[str, str], *, returns: Optional[type] = None, training: bool = False) -> str:
    """The Python program of a task: fn's source and the entry calling it.

    params maps each parameter given on the command line to its type's name
    (str, int, float, bool, path); artifacts maps output-artifact parameters
    to the file they get in the outputs directory; outputs names the return
    values. returns is the return annotation when it is a NamedTuple: the
    program defines it (fields only), so ``return Stats(...)`` works.
    training adds the check that only rank 0 writes the outputs.
    """
    named = returns is not None
    check_self_contained(fn, what, (returns.__name__,) if named else ())
    src = function_source(fn, what, tuple(artifacts))
    prelude = ""
    if named and returns.__name__ in _globals_read(fn):
        prelude = (f"{returns.__name__} = __import__(\"collections\").namedtuple("
                   f"{returns.__name__!r}, {list(returns._fields)!r})\n\n\n")
    entry = _entry(fn.__name__, params, outputs, artifacts, named, training)
    return "from __future__ import annotations\n\n" + prelude + src + entry
