import pytest

from events import EventFull, create_event


def test_sign_up_until_full_then_waitlist():
    ev = create_event("Board games", "2024-05-03T19:00", capacity=2)
    assert ev.sign_up("ana") == "confirmed"
    assert ev.sign_up("bo") == "confirmed"
    assert ev.sign_up("cy") == "waitlisted"
    assert ev.seats_left == 0


def test_cancel_promotes_waitlist():
    ev = create_event("Repair cafe", "2024-05-04T10:00", capacity=1)
    ev.sign_up("ana")
    ev.sign_up("bo")
    assert ev.cancel("ana") == "bo"
    assert ev.attendees == ["bo"]


def test_full_without_waitlist_raises():
    ev = create_event("Talk", "2024-05-05T18:00", capacity=1)
    ev.sign_up("ana")
    with pytest.raises(EventFull):
        ev.sign_up("bo", allow_waitlist=False)


def test_new_event_starts_empty():
    first = create_event("Choir", "2024-05-06T20:00")
    first.sign_up("dee")
    second = create_event("Yoga", "2024-05-07T08:00")
    assert second.attendees == []
    assert "0/20" in second.summary()
