"""One run per press: the one-time key a run request may carry.

A request may carry a key (the drill form's one-time token, an API client's Idempotency-Key):
the same request sent again with the same key by the same learner answers with the run it
started, and starts nothing (with other choices it is a new run). app/runs/attempts.py checks it
under the learner's row lock (app/core/row_locks.py) that the cap on unfinished runs takes anyway,
so two presses at once, in one web process or two, wait for each other; the unique
(learner_id, request_key) of the table backs it.
"""

import json
import re
import secrets
from collections.abc import Mapping
from typing import Any

from sqlmodel import Session, col, select

from app.core.limits import MAX_REQUEST_KEY
from app.runs.models import Attempt
from app.web.field_errors import FieldErrors

REQUEST_KEY = re.compile(rf"[A-Za-z0-9._:-]{{1,{MAX_REQUEST_KEY}}}")


def new_request_key() -> str:
    """A fresh one-time key for a rendered run form (22 URL-safe characters)."""
    return secrets.token_urlsafe(16)


def validated_key(raw: str | None) -> str | None:
    """The key as sent, None for none; FieldErrors naming `request_key` for a malformed one."""
    if raw is None or raw == "":
        return None
    if not REQUEST_KEY.fullmatch(raw):
        raise FieldErrors(
            "request_key", f"a request key is 1 to {MAX_REQUEST_KEY} letters, digits or . _ : -"
        )
    return raw


def started_by_key(session: Session, *, learner_id: int, key: str) -> Attempt | None:
    """The learner's run started by a request with this key, if any."""
    query = select(Attempt).where(
        col(Attempt.learner_id) == learner_id, col(Attempt.request_key) == key
    )
    return session.exec(query).first()


def repeats(earlier: Attempt, asked: Mapping[str, Any], *, hidden_setup: bool) -> bool:
    """Whether a request repeats the one that started `earlier`. `asked` holds the request's
    drill, hypothesis, prediction, numbers and (for a setup of the learner's own) knobs and
    seed, compared as stored: JSON has lists where the knobs have tuples. A hidden setup is the
    draw's, not the request's: the same press draws it once."""
    stored: dict[str, Any] = {
        "drill": earlier.drill_slug,
        "hypothesis": earlier.hypothesis,
        "prediction": earlier.prediction_text,
        "numeric": earlier.numeric_predictions,
    }
    if not hidden_setup:
        stored |= {"knobs": earlier.knobs, "seed": earlier.seed}
    same = json.loads(json.dumps(dict(asked))) == json.loads(json.dumps(stored))
    return bool(same and earlier.hidden_setup == hidden_setup)
