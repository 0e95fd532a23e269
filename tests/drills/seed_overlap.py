"""Whether our review items reuse the study material's wording, without keeping that material.

The seed texts are third-party and are not in the repository; only a fingerprint of them is:
a short hash of every run of RUN_WORDS consecutive words (lowercased, punctuation and Markdown
dropped). An item that shares such a run with a seed text copied a sentence instead of saying
it in our own words.

Rebuild the fingerprints after the seeds change:
    .venv/bin/python -m tests.drills.seed_overlap ../shared/seeds
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

RUN_WORDS = 10  # stricter than the 12 the brief names: a shared 10-word run is no accident
FINGERPRINTS = Path(__file__).with_name("seed_fingerprints.txt")


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def runs(text: str, length: int = RUN_WORDS) -> set[str]:
    found = words(text)
    return {" ".join(found[i : i + length]) for i in range(len(found) - length + 1)}


def fingerprint(run: str) -> str:
    return hashlib.sha256(run.encode()).hexdigest()[:12]


def stored_fingerprints() -> set[str]:
    return set(FINGERPRINTS.read_text().split())


def shared_runs(text: str) -> set[str]:
    """The runs of `text` that also occur in a seed text."""
    stored = stored_fingerprints()
    return {run for run in runs(text) if fingerprint(run) in stored}


def main(seed_dir: str) -> None:
    texts = [path.read_text() for path in sorted(Path(seed_dir).glob("*.txt"))]
    hashes = sorted({fingerprint(run) for text in texts for run in runs(text)})
    FINGERPRINTS.write_text("\n".join(hashes) + "\n")
    print(f"{len(hashes)} fingerprints from {len(texts)} texts -> {FINGERPRINTS}")


if __name__ == "__main__":
    main(sys.argv[1])
