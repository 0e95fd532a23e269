"""Whole numbers sent by people (form fields, query strings, keys in paths).

Python's `int()` takes more than a person would type as a number: other scripts' digits
("٣" is 3), and `str.isdigit()` says yes to "²", which `int()` then refuses; past 4,300 digits it
raises instead of converting. Each of these once answered a request with a 500. Here a number is
ASCII digits, no more of them than the largest value allowed has, and within that value.
"""


def whole_number(text: str, *, maximum: int) -> int | None:
    """The number `text` spells, or None when it is not one from 0 to `maximum`."""
    if not text or not text.isascii() or not text.isdigit() or len(text) > len(str(maximum)):
        return None
    value = int(text)
    return value if value <= maximum else None
