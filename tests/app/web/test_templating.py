import math
import re
from collections.abc import Callable

import pytest

from app.accounts.models import Role
from app.cases.models import CaseStage
from app.core import limits
from app.core.config import ROOT, Settings
from app.grading.models import Decision, SubmissionStatus
from app.main import create_app
from app.runs.models import AttemptStatus
from app.runs.replay_models import ReplayStatus, ReplayVerdict
from app.web.templating import is_measurement, number, table_cell, templates


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


def test_observation_cells_go_through_table_cell() -> None:
    """An observation may be a flag (val-below-train's eval_repeatable): through `number` it
    read "True" on the case page, through `table_cell` it reads "yes"."""
    through_number = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for match in re.finditer(r"row\.(?:value|expected)\|number", path.read_text())
    ]
    assert through_number == []


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


STATUS_WORDS = {
    status.value
    for vocabulary in (
        AttemptStatus,
        CaseStage,
        Decision,
        ReplayStatus,
        ReplayVerdict,
        Role,
        SubmissionStatus,
    )
    for status in vocabulary
}


def test_templates_compare_statuses_by_their_enum_not_a_bare_string() -> None:
    compared = re.compile(r"""(?:==|!=|"equalto",)\s*["'](\w+)["']""")
    bare = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for match in compared.finditer(path.read_text())
        if match.group(1) in STATUS_WORDS
    ]
    assert bare == []


@pytest.mark.parametrize(
    ("run_status", "attempt_status"),
    [
        ("ok", AttemptStatus.succeeded),
        ("error", AttemptStatus.failed),
        ("timed_out", AttemptStatus.timed_out),
        ("resource_limit", AttemptStatus.resource_limit),
        ("something new", AttemptStatus.failed),
    ],
)
def test_a_run_record_status_maps_to_one_attempt_status(
    run_status: str, attempt_status: AttemptStatus
) -> None:
    assert AttemptStatus.of_run(run_status) is attempt_status


def test_the_app_compiles_every_template_before_any_request(
    make_settings: Callable[..., Settings],
) -> None:
    """A page's first request never compiles its template in the thread pool, where two at
    once could meet CPython 3.11.7's AST race (app/web/templating.compile_every_template)."""
    assert templates.env.cache is not None
    templates.env.cache.clear()
    create_app(make_settings())
    names = set(templates.env.list_templates(extensions=["html"]))
    cached = {name for (_, name) in templates.env.cache.keys()}
    assert len(names) > 40 and names <= cached
