"""Running a test's coroutine to its end from synchronous test code."""

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_to_end(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """`asyncio.run(main())` in a thread of its own. In the main thread it fails when an event
    loop is already running there: the browser tests' Playwright session keeps one running for
    the rest of the test process, so any test that came after them in a shuffled order failed
    (and left its coroutine unawaited, which failed a later test as well)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(lambda: asyncio.run(main())).result()
