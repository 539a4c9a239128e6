from datetime import date

from hotel.booking import parse_form


def test_form_becomes_reservation():
    r = parse_form({"guest": " Ada Lovelace ", "room": "Suite", "arrival": "2024-08-01", "departure": "2024-08-04"})
    assert (r.guest, r.room_type, r.night_count) == ("Ada Lovelace", "suite", 3)
    assert r.departure == date(2024, 8, 4)
    assert r.total_cents() == 3 * (24900 + 250)


def test_breakfast_is_per_night():
    r = parse_form({"guest": "Ben", "arrival": "2024-08-01", "departure": "2024-08-03", "breakfast": "yes"})
    assert r.total_cents() == 2 * (12900 + 250 + 1500)


def test_departure_must_follow_arrival():
    try:
        parse_form({"guest": "Cy", "arrival": "2024-08-03", "departure": "2024-08-03"})
    except ValueError:
        return
    raise AssertionError("a zero-night stay was accepted")
