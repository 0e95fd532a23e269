"""What the server's log shows of Dask's connections."""

import logging

from app.__main__ import configure_logging


def test_a_connection_closed_under_a_send_is_not_logged_but_a_failed_write_is() -> None:
    root, batched = logging.getLogger(), logging.getLogger("distributed.batched")
    levels = root.level, batched.level
    try:
        # As the server runs (pytest has its own handlers, so basicConfig leaves the root alone).
        root.setLevel(logging.INFO)
        configure_logging()
        # "Batched Comm Closed" (INFO, with a traceback) and "Error in batched write" (ERROR).
        assert not batched.isEnabledFor(logging.INFO)
        assert batched.isEnabledFor(logging.ERROR)
        assert logging.getLogger("app.runner").isEnabledFor(logging.INFO)
    finally:
        root.setLevel(levels[0])
        batched.setLevel(levels[1])
