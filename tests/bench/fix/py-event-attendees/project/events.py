"""Community events: creation, sign-ups and a waiting list when an event is full."""
from datetime import datetime


class EventFull(Exception):
    pass


class Event:
    def __init__(self, title, starts_at, capacity, attendees=[], waitlist=None):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.title = title
        self.starts_at = starts_at
        self.capacity = capacity
        self.attendees = attendees
        self.waitlist = list(waitlist) if waitlist else []

    @property
    def seats_left(self):
        return self.capacity - len(self.attendees)

    def sign_up(self, name, allow_waitlist=True):
        """Add a person; when full, queue them (or raise when waitlisting is off)."""
        if name in self.attendees or name in self.waitlist:
            return "already"
        if self.seats_left > 0:
            self.attendees.append(name)
            return "confirmed"
        if not allow_waitlist:
            raise EventFull(self.title)
        self.waitlist.append(name)
        return "waitlisted"

    def cancel(self, name):
        """Remove a person; the first on the waiting list takes a freed seat."""
        if name in self.waitlist:
            self.waitlist.remove(name)
            return None
        self.attendees.remove(name)
        if self.waitlist:
            promoted = self.waitlist.pop(0)
            self.attendees.append(promoted)
            return promoted
        return None

    def summary(self):
        when = self.starts_at.strftime("%a %d %b %H:%M")
        return f"{self.title} ({when}): {len(self.attendees)}/{self.capacity}, {len(self.waitlist)} waiting"


def create_event(title, when, capacity=20):
    """Create an event from an ISO date-time string."""
    return Event(title, datetime.fromisoformat(when), capacity)
