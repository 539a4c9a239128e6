from datetime import datetime

from agenda.events import busy, new_event

NINE = datetime(2024, 6, 3, 9, 0)


def test_organiser_attends():
    e = new_event("Standup", NINE, 15, "ana")
    assert e.attendees == ["ana"]


def test_events_do_not_share_attendees():
    first = new_event("Standup", NINE, 15, "ana")
    second = new_event("Review", NINE, 60, "ben")
    assert first.attendees == ["ana"]
    assert second.attendees == ["ben"]


def test_given_list_keeps_its_people():
    e = new_event("Planning", NINE, 30, "ana", ["cy", "ana"])
    assert e.attendees == ["cy", "ana"]


def test_busy_only_during_own_events():
    events = [new_event("Standup", NINE, 15, "ana"), new_event("1:1", NINE, 30, "ben", ["cy"])]
    assert busy(events, "cy", datetime(2024, 6, 3, 9, 20))
    assert not busy(events, "ana", datetime(2024, 6, 3, 9, 20))
