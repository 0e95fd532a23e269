"""Which user a sandbox runs as.

bwrap started by real root keeps its capabilities inside, even with --unshare-user and
--cap-drop ALL (measured here: it read /etc/shadow). So a root caller first becomes an
unprivileged user, with no supplementary groups, and bwrap then needs no privilege at all; a
non-root caller runs bwrap as itself. RLIMIT_NPROC is set inside each sandbox's own user
namespace (see policy.py), so sandboxes sharing this uid do not share a process count.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# nobody/nogroup: owns nothing on the host, so "other" permission bits are all it gets.
SANDBOX_UID = 65534
SANDBOX_GID = 65534


@dataclass(frozen=True)
class Identity:
    uid: int
    gid: int
    # Whether the sandbox is started with a switch to (uid, gid) (we are root), or as ourselves.
    switch: bool


def sandbox_identity() -> Identity:
    if os.geteuid() == 0:
        return Identity(SANDBOX_UID, SANDBOX_GID, switch=True)
    return Identity(os.getuid(), os.getgid(), switch=False)
