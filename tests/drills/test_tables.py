import pytest

from drills.kit.tables import table


def test_a_table_keeps_its_rows_as_lists() -> None:
    made = table("pairs", "Pairs", ["input", "label"], [("a", "b"), ("b", "c")], note="shifted")
    assert made == {
        "key": "pairs",
        "title": "Pairs",
        "columns": ["input", "label"],
        "rows": [["a", "b"], ["b", "c"]],
        "note": "shifted",
    }


def test_a_ragged_row_is_refused() -> None:
    with pytest.raises(ValueError, match="pairs"):
        table("pairs", "Pairs", ["input", "label"], [("a",)])
