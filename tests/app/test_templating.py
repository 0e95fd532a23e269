import math

import pytest

from app.templating import is_measurement, number, table_cell


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
