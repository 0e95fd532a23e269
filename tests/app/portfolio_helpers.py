"""Shared pieces of the portfolio tests: a learner with a reviewed submission, one with cases,
rounds and spaced reviews, an export built straight from the database, reading an export's zip,
and altering one byte of one record in an export's JSON."""

import io
import json
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, select

from app.accounts.models import Role, User
from app.cases.models import CaseAttempt, CaseStage
from app.portfolio.export import PortfolioExport, build_export
from app.practice.models import ReviewCard, ReviewLogEntry, ReviewSource
from app.practice.round_models import DiagnosisRound
from tests.app.factories import (
    add_attempt,
    add_case_attempt,
    add_cohort,
    add_explanation,
    add_review,
    add_round,
    add_submission,
    add_user,
    engine_of,
    signed_in,
)


@dataclass
class Learner:
    id: int
    failed: int
    fixed: int
    submission: int
    review: int


def reviewed_learner(
    engine: Engine,
    username: str,
    instructor_id: int,
    *,
    display_name: str | None = None,
    text: str = "The labels were shuffled every step.",
    comment: str = "Say which tensor was shuffled.",
) -> Learner:
    """A learner with a failed and a fixed attempt, an explanation, a submission that was sent
    back with changes requested, and a second version still pending."""
    learner = add_user(engine, username, display_name=display_name)
    failed = add_attempt(engine, learner, fixed=False, prediction=text)
    fixed = add_attempt(engine, learner, fixed=True, prediction=text)
    add_explanation(engine, fixed, learner, text)
    first = add_submission(
        engine, learner, failed, fixed, text=text, version=1, status="changes_requested"
    )
    review = add_review(engine, first, instructor_id, comment=comment, decision="changes_requested")
    add_submission(engine, learner, failed, fixed, text=text, version=2)
    return Learner(learner, failed, fixed, first, review)


@dataclass
class Classroom:
    learner_a: Learner
    learner_b: Learner
    instructor: int
    cohort_a: int
    clients: dict[str, TestClient]


def classroom(anonymous: TestClient) -> Classroom:
    """instructor-1 runs C1 (learner-a); instructor-2 runs C2 (learner-b)."""
    engine = engine_of(anonymous)
    one = add_user(engine, "instructor-1", Role.instructor)
    two = add_user(engine, "instructor-2", Role.instructor)
    a = reviewed_learner(engine, "learner-a", one)
    b = reviewed_learner(engine, "learner-b", two, text="B's own words.")
    c1 = add_cohort(engine, one, name="C1", code="AAAA2222", learners=[a.id])
    add_cohort(engine, two, name="C2", code="BBBB3333", learners=[b.id])
    app = anonymous.app
    clients = {
        name: signed_in(app, name)  # type: ignore[arg-type]
        for name in ("learner-a", "learner-b", "instructor-1", "instructor-2")
    }
    return Classroom(a, b, one, c1, clients)


def unzip(body: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def alter_one_byte(raw: bytes, record_index: int) -> bytes:
    """The export with one ASCII letter of one record's prediction text changed in place.

    The file holds one record per line; the letter is found inside that record's own line.
    """
    document: dict[str, Any] = json.loads(raw)
    record = document["statements"][record_index]
    lines = raw.split(b"\n")
    prefix = b'  {"id":' + json.dumps(record["id"]).encode()
    (line_no,) = [n for n, line in enumerate(lines) if line.startswith(prefix)]
    text = record["result"]["prediction"]["text"]
    needle = json.dumps(text, ensure_ascii=False).encode("utf-8")
    at = (
        lines[line_no].index(needle)
        + 1
        + next(i for i, ch in enumerate(text) if ch.isascii() and ch.isalpha())
    )
    line = lines[line_no]
    lines[line_no] = line[:at] + line[at : at + 1].swapcase() + line[at + 1 :]
    altered = b"\n".join(lines)
    assert len(altered) == len(raw) and sum(x != y for x, y in zip(raw, altered, strict=True)) == 1
    return altered


def add_review_log(
    engine: Engine,
    learner_id: int,
    item_key: str,
    *,
    rating: str,
    answer: str,
    reviewed_at: datetime,
) -> int:
    """One spaced review of `item_key` (its card made on the first): the log entry's id."""
    with Session(engine) as session:
        card = session.exec(
            select(ReviewCard).where(
                ReviewCard.learner_id == learner_id, ReviewCard.item_key == item_key
            )
        ).first()
        if card is None:
            card = ReviewCard(learner_id=learner_id, item_key=item_key, source=ReviewSource.track)
            session.add(card)
            session.flush()
        assert card.id is not None
        entry = ReviewLogEntry(
            card_id=card.id,
            learner_id=learner_id,
            item_key=item_key,
            answer=answer,
            rating=rating,
            retrievability=0.9,
            due_after=reviewed_at + timedelta(days=3),
            reviewed_at=reviewed_at,
        )
        session.add(entry)
        session.commit()
        assert entry.id is not None
        return entry.id


@dataclass
class Diagnosing:
    learner: int
    case: int  # revealed
    open_case: int  # still investigating: its draw must not be exported
    round: int  # answered
    open_round: int  # not answered yet
    reviews: list[int]


def diagnosing_work(
    engine: Engine, learner: int, *, words: str = "optimize every parameter"
) -> Diagnosing:
    """A revealed case and one still open, an answered curve round and one still open, and three
    spaced reviews over two weeks; `words` is what the learner wrote as the case's and the
    round's expected fix and as each review's answer."""
    case, _ = add_case_attempt(engine, learner)
    open_case, _ = add_case_attempt(engine, learner, stage=CaseStage.investigating, number=2)
    answered = add_round(engine, learner)
    open_round = add_round(engine, learner, answered=False, number=2)
    with Session(engine) as session:
        rows = [session.get(CaseAttempt, case), session.get(DiagnosisRound, answered)]
        for row in rows:
            assert row is not None and row.diagnosis is not None
            row.diagnosis = row.diagnosis | {"intervention": words}
            session.add(row)
        session.commit()
    monday = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    reviews = [
        add_review_log(engine, learner, key, rating=rating, answer=words, reviewed_at=when)
        for key, rating, when in (
            ("track:fastest-wiring-check", "again", monday),
            ("track:fastest-wiring-check", "good", monday + timedelta(days=2)),
            ("cohort:1", "easy", monday + timedelta(days=8)),
        )
    ]
    return Diagnosing(learner, case, open_case, answered, open_round, reviews)


def export_of(engine: Engine, learner_id: int) -> PortfolioExport:
    """The learner's export (JSON and HTML) as the download route builds it, signed by a
    throw-away key."""
    with Session(engine) as session:
        learner = session.get(User, learner_id)
        assert learner is not None
        return build_export(
            session,
            learners=[learner],
            exporter=learner,
            key=Ed25519PrivateKey.generate(),
            basename="portfolio",
            title="Portfolio",
            kind="html",
        )
