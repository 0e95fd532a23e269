"""Source is parsed one thread at a time (drills/core/syntax.py): CPython 3.11.7's AST
constructor shares its recursion depth between threads, and two parses at once in the web
process's thread pool failed a review test with "AST constructor recursion depth mismatch"."""

import ast
import threading
import time

import pytest

from drills.core import syntax


def test_no_two_threads_parse_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    inside = 0
    most = 0
    count = threading.Lock()
    real_parse = ast.parse

    def slow_parse(source: str) -> ast.Module:
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)  # long enough for every other thread to arrive
        with count:
            inside -= 1
        return real_parse(source)

    monkeypatch.setattr(ast, "parse", slow_parse)  # the module syntax.parse calls
    threads = [threading.Thread(target=syntax.parse, args=("x = 1\n",)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 1


def test_the_tree_is_the_standard_one() -> None:
    tree = syntax.parse("def f(x):\n    return x + 1\n")
    assert ast.dump(tree) == ast.dump(ast.parse("def f(x):\n    return x + 1\n"))
