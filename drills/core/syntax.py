"""Parsing Python source into a syntax tree, one thread at a time.

CPython 3.11 before 3.11.8 keeps the AST constructor's recursion depth in state that threads
share: two threads turning source into trees at once can fail with "SystemError: AST constructor
recursion depth mismatch" (python/cpython#106905). The web process parses in its thread pool
(the code a run executed, a fix's diff, an exercise submission), so every parse goes through one
lock; a parse of a training file takes about a millisecond.
"""

from __future__ import annotations

import ast
import threading

_one_at_a_time = threading.Lock()


def parse(source: str) -> ast.Module:
    with _one_at_a_time:
        return ast.parse(source)
