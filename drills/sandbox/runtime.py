"""Which Python runs inside the sandbox, and which host directories it needs.

The sandbox gets an allow-list, never the host's root: /usr (with the /lib, /lib64, /bin links of
a merged-/usr system), the loader cache, /etc/alternatives (Debian's BLAS is found through it),
the environment's site-packages, and the `drills` package alone. site-packages and drills are
mounted at neutral paths under /opt/drillbook, so neither the repository (app/, the data
directory, pyproject.toml) nor its location is visible inside.

The interpreter is this process's own base interpreter when the sandbox's user can reach it, or
else the system one of the same version: a pyenv interpreter under /root (mode 0700) cannot be
mounted by an unprivileged bwrap. Either runs with `-S` and an explicit sys.path, so which one it
is does not change what code it sees; CPython keeps its ABI within a minor version.
"""

from __future__ import annotations

import os
import stat
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

INSIDE_ROOT = "/opt/drillbook"
SITE_PACKAGES_INSIDE = f"{INSIDE_ROOT}/site-packages"
# Read-only host paths every sandbox gets, when they exist on this host.
SYSTEM_PATHS = ("/usr", "/etc/ld.so.cache", "/etc/alternatives")
# Top-level directories that merged-/usr systems make symlinks into /usr.
MERGED_USR_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class RuntimeNotFound(Exception):
    pass


@dataclass(frozen=True)
class Runtime:
    python: str
    # (host path, path inside), mounted read-only.
    binds: tuple[tuple[str, str], ...]
    # (link path, target): the merged-/usr links.
    symlinks: tuple[tuple[str, str], ...]
    # sys.path entries to put first inside: the drills package's parent, then site-packages.
    sys_path: tuple[str, ...]
    # Paths inside the drills package the code must never read, masked after it is mounted:
    # files covered by /dev/null, directories by an empty tmpfs (see hidden_answers).
    hidden_files: tuple[str, ...] = ()
    hidden_dirs: tuple[str, ...] = ()


# An exercise's answers: its reference solution and its hidden checks (drills.exercises). The
# harness beside them is imported inside; these two are read only by the judge, outside.
ANSWER_FILES = ("solution.py", "checks.py")


def hidden_answers(drills: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The exercise files to mask inside, and the bytecode folders beside them, as paths inside
    the sandbox. A folder is masked whole, and made first if missing: a mount is a live view,
    so bytecode the judge writes later (checks.cpython-311.pyc) would otherwise show up inside
    a sandbox that was already waiting in the warm pool."""
    files, dirs = [], []
    for folder in sorted(drills.glob("catalog/*/exercises/*")):
        if not (folder / "__init__.py").is_file():
            continue
        inside = f"{INSIDE_ROOT}/drills/{folder.relative_to(drills)}"
        files += [f"{inside}/{name}" for name in ANSWER_FILES if (folder / name).is_file()]
        cache = folder / "__pycache__"
        try:
            cache.mkdir(exist_ok=True)
        except OSError:  # a read-only tree: nothing can write bytecode there either
            continue
        dirs.append(f"{inside}/__pycache__")
    return tuple(files), tuple(dirs)


def reachable(path: Path, uid: int, gid: int) -> bool:
    """Whether a process with this uid and gid (and no supplementary groups) can search every
    directory on the way to `path` and read it."""
    try:
        resolved = path.resolve(strict=True)
    except OSError:
        return False
    for step in (*reversed(resolved.parents), resolved):
        info = step.stat()
        if uid == 0:
            continue
        if info.st_uid == uid:
            bits = (stat.S_IXUSR, stat.S_IRUSR)
        elif info.st_gid == gid:
            bits = (stat.S_IXGRP, stat.S_IRGRP)
        else:
            bits = (stat.S_IXOTH, stat.S_IROTH)
        needed = bits[0] if stat.S_ISDIR(info.st_mode) else bits[1]
        if not info.st_mode & needed:
            return False
    return True


def _interpreter(uid: int, gid: int) -> tuple[Path, Path]:
    """The real interpreter to run and the prefix that holds its standard library."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    candidates = [
        (base, Path(sys.base_prefix)),
        (Path(f"/usr/bin/{version}"), Path("/usr")),
        (Path(f"/usr/local/bin/{version}"), Path("/usr/local")),
    ]
    for exe, prefix in candidates:
        stdlib = prefix / "lib" / version / "os.py"
        if reachable(exe, uid, gid) and reachable(stdlib, uid, gid):
            return exe.resolve(), prefix.resolve()
    raise RuntimeNotFound(f"no {version} interpreter the sandbox's user (uid {uid}) can run")


def _under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def find_runtime(uid: int, gid: int) -> Runtime:
    python, prefix = _interpreter(uid, gid)
    binds = [(path, path) for path in SYSTEM_PATHS if os.path.exists(path)]
    if not _under(prefix, Path("/usr")):
        binds.append((str(prefix), str(prefix)))
    symlinks = [
        (link, os.readlink(link))
        for link in MERGED_USR_LINKS
        if os.path.islink(link) and os.readlink(link).lstrip("/").startswith("usr/")
    ]
    # Real /lib-style directories (a non-merged system) are mounted as they are.
    binds += [
        (link, link)
        for link in MERGED_USR_LINKS
        if os.path.isdir(link) and not os.path.islink(link)
    ]
    # This environment's packages (a venv's, or the system's under /usr/local in the image),
    # at a neutral path inside.
    site_dirs = dict.fromkeys(
        Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")
    )
    site_inside = []
    for number, site in enumerate(site_dirs):
        if not reachable(site, uid, gid):
            raise RuntimeNotFound(f"the sandbox's user (uid {uid}) cannot read {site}")
        inside = SITE_PACKAGES_INSIDE if number == 0 else f"{SITE_PACKAGES_INSIDE}-{number}"
        binds.append((str(site), inside))
        site_inside.append(inside)
    drills = Path(__file__).resolve().parent.parent
    if not reachable(drills / "__init__.py", uid, gid):
        raise RuntimeNotFound(f"the sandbox's user (uid {uid}) cannot read {drills}")
    binds.append((str(drills), f"{INSIDE_ROOT}/drills"))
    hidden_files, hidden_dirs = hidden_answers(drills)
    return Runtime(
        python=str(python),
        binds=tuple(binds),
        symlinks=tuple(symlinks),
        sys_path=(INSIDE_ROOT, *site_inside),
        hidden_files=hidden_files,
        hidden_dirs=hidden_dirs,
    )
