"""Links that set up a drill's form (`/drills/<slug>?seed=N&knob.name=value`): a review item or a
revealed round sends the learner to run the same setup themselves. Values are written as the
form shows them (a list as "a,b,c") and URL-encoded."""

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode


def form_value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    return str(value)


def drill_setup_href(slug: str, seed: int, knobs: Mapping[str, Any]) -> str:
    query = [("seed", str(seed))]
    query += [(f"knob.{name}", form_value(value)) for name, value in sorted(knobs.items())]
    return f"/drills/{slug}?{urlencode(query)}"
