from datetime import date

import pytest

from availability import Calendar


def make():
    cal = Calendar(["blue", "green"])
    cal.book("blue", date(2024, 5, 3), date(2024, 5, 5), "Ines")
    return cal


def test_view_covers_requested_days():
    grid = make().view(date(2024, 5, 2), date(2024, 5, 5))
    assert list(grid) == [date(2024, 5, d) for d in (2, 3, 4, 5)]
    assert grid[date(2024, 5, 4)]["blue"] == "Ines"
    assert grid[date(2024, 5, 5)]["blue"] is None


def test_single_day_view():
    grid = make().view(date(2024, 5, 3), date(2024, 5, 3))
    assert grid == {date(2024, 5, 3): {"blue": "Ines", "green": None}}


def test_free_rooms():
    cal = make()
    assert cal.free_rooms(date(2024, 5, 4), date(2024, 5, 6)) == ["green"]


def test_double_booking_rejected():
    cal = make()
    with pytest.raises(ValueError, match="taken"):
        cal.book("blue", date(2024, 5, 4), date(2024, 5, 7), "Olaf")


def test_back_to_back_bookings():
    cal = make()
    cal.book("blue", date(2024, 5, 5), date(2024, 5, 6), "Olaf")
    assert cal.guest_on("blue", date(2024, 5, 5)) == "Olaf"
