"""Modules over 600 lines and functions over 60 lines in a package (issue 37's closing note).

Usage: ``python tools/sizes.py [PACKAGE_DIR]`` (default ``adfkit``): one line per module over
600 lines, then one per function or method over 60 lines (its definition to its last line,
decorators and docstring included), longest first, and the two counts.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MODULE_LINES = 600
FUNCTION_LINES = 60


def sizes(root: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    modules, functions = [], []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        n = text.count("\n")
        rel = path.relative_to(root.parent)
        if n > MODULE_LINES:
            modules.append((n, str(rel)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > FUNCTION_LINES:
                    functions.append((length, f"{rel}:{node.lineno} {node.name}"))
    return sorted(modules, reverse=True), sorted(functions, reverse=True)


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "adfkit").resolve()
    modules, functions = sizes(root)
    for n, name in modules:
        print(f"module   {n:5d}  {name}")
    for n, name in functions:
        print(f"function {n:5d}  {name}")
    print(
        f"{len(modules)} modules over {MODULE_LINES} lines, "
        f"{len(functions)} functions over {FUNCTION_LINES} lines"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
