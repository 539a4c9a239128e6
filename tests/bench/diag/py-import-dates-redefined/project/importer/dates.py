"""Dates in the bank exports we import: ISO (2024-03-31) from the new
online banking, DD/MM/YYYY from the old one, DD.MM.YYYY from one partner."""
import re
from datetime import date

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DMY = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$")


def parse_date(text):
    text = text.strip()
    m = _ISO.match(text)
    if m:
        year, month, day = map(int, m.groups())
        return date(year, month, day)
    m = _DMY.match(text)
    if m:
        day, month, year = map(int, m.groups())
        return date(year, month, day)
    raise ValueError(f"not a date: {text!r}")


def format_date(value):
    return value.strftime("%d %b %Y")


def parse_date(text):
    day, month, year = text.strip().split("/")
    return date(int(year), int(month), int(day))


def statement_period(rows):
    """(first, last) booking date of a statement's rows."""
    dates = sorted(parse_date(r["booked"]) for r in rows)
    if not dates:
        raise ValueError("empty statement")
    return dates[0], dates[-1]
