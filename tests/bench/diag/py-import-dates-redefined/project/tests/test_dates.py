from datetime import date

from importer.dates import format_date, parse_date, statement_period


def test_all_three_formats():
    assert parse_date("2024-03-31") == date(2024, 3, 31)
    assert parse_date(" 07/04/2024 ") == date(2024, 4, 7)
    assert parse_date("1.2.2024") == date(2024, 2, 1)


def test_garbage_is_refused():
    for bad in ("31/31", "yesterday", ""):
        try:
            parse_date(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")


def test_period_of_a_mixed_statement():
    rows = [{"booked": "2024-03-02"}, {"booked": "28/02/2024"}, {"booked": "2024-03-15"}]
    first, last = statement_period(rows)
    assert (format_date(first), format_date(last)) == ("28 Feb 2024", "15 Mar 2024")
