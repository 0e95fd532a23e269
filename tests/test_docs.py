"""The README stays a five-minute read that starts with the two commands, and the documentation
site keeps every page reachable. (Broken links and anchors inside docs/ are `mkdocs build
--strict`'s to catch: `make docs`, part of `make test`.)"""

import re
from pathlib import Path
from typing import Any

from mkdocs.config import load_config

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

README_MAX_LINES = 150
# CI (.ci/run) and the fresh-clone check run the first two commands of the README's first code
# block: serve, then test.
TWO_COMMANDS = ("make run", "make test")


def first_code_block(text: str) -> list[str]:
    match = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    assert match, "the README has no code block"
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


def nav_pages(entries: Any) -> list[str]:
    """Every page file named in mkdocs.yml's nav, however deeply nested."""
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [page for entry in entries for page in nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in nav_pages(value)]
    return []


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_readme_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.startswith("# Drillbook\n\n```bash\n"), "the title, then the two commands"
    commands = [line.split("#")[0].strip() for line in first_code_block(text)]
    assert tuple(commands) == TWO_COMMANDS


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    in_nav = nav_pages(load_config(str(ROOT / "mkdocs.yml"))["nav"])
    on_disk = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))
    assert sorted(set(in_nav)) == on_disk
    assert len(in_nav) == len(set(in_nav)), "a page listed twice"


def test_the_readmes_links_and_images_point_at_files_here() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [target for target in targets if "://" not in target]
    assert local, "the README links into docs/"
    missing = [target for target in local if not (ROOT / target).exists()]
    assert missing == []


def test_the_readmes_screenshot_is_small() -> None:
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README.read_text(encoding="utf-8"))
    assert images, "the README shows the app"
    for image in images:
        assert (ROOT / image).stat().st_size <= 300_000, image
