"""Starting and stopping `python -m app ...` processes: the helpers live in support/processes.py
(the scale-out benchmark starts the same deployment), the process tests import them from here."""

from support.processes import free_port, kill_group, start, stop

__all__ = ["free_port", "kill_group", "start", "stop"]
