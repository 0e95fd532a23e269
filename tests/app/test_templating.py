import math
import re

import pytest

from app import limits
from app.config import ROOT
from app.templating import is_measurement, number, table_cell, templates


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "yes"),
        (False, "no"),
        (None, "—"),
        (3, "3"),
        (0.693147, "0.6931"),
        (1.5e-8, "1.500e-08"),
        (math.inf, "inf"),
        ("·PAD·", "·PAD·"),
    ],
)
def test_table_cells_read_as_a_person_would(value: object, shown: str) -> None:
    assert table_cell(value) == shown


def test_flags_are_not_measurements() -> None:
    assert is_measurement(0.5) and is_measurement(2)
    assert not is_measurement(True) and not is_measurement("1")


def test_numbers_keep_four_significant_digits() -> None:
    assert number(1234.5678) == "1235" and number(123456.0) == "1.235e+05"


def test_forms_take_their_length_caps_from_app_limits() -> None:
    """A number in a template's maxlength would drift from the services' checks."""
    hard_coded = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for match in re.finditer(r'maxlength="\d+"', path.read_text())
    ]
    assert hard_coded == []


def test_a_form_shows_the_same_cap_the_service_checks() -> None:
    page = templates.env.get_template("pages/cohorts.html").render(cohorts=[], error=None)
    assert f'maxlength="{limits.MAX_COHORT_NAME}"' in page
