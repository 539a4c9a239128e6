"""Calendar events: the organiser always attends their own event."""
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass
class Event:
    title: str
    start: datetime
    minutes: int
    organiser: str
    attendees: list

    @property
    def end(self):
        return self.start + timedelta(minutes=self.minutes)


def new_event(title, start, minutes, organiser, attendees=[]):
    """An event whose attendee list starts with the organiser, without duplicates."""
    if minutes <= 0:
        raise ValueError("an event lasts at least a minute")
    if organiser not in attendees:
        attendees.insert(0, organiser)
    return Event(title, start, minutes, organiser, attendees)


def busy(events, person, at):
    return any(person in e.attendees and e.start <= at < e.end for e in events)
