"""Room availability for a small guest house.

Bookings occupy nights: a booking from 3 May to 5 May (check-out day) occupies
the nights of 3 and 4 May. Calendar views ask for a span of days, inclusive at
both ends, and get one entry per day.
"""
from dataclasses import dataclass
from datetime import date, timedelta


@dataclass(frozen=True)
class Booking:
    room: str
    check_in: date
    check_out: date
    guest: str

    def __post_init__(self):
        if self.check_out <= self.check_in:
            raise ValueError("check-out must be after check-in")

    def occupies(self, night):
        return self.check_in <= night < self.check_out


def days(first, last):
    """Every date from first to last, both included."""
    current = first
    while current < last:
        yield current
        current += timedelta(days=1)


class Calendar:
    def __init__(self, rooms):
        self.rooms = list(rooms)
        self.bookings = []

    def book(self, room, check_in, check_out, guest):
        if room not in self.rooms:
            raise KeyError(room)
        new = Booking(room, check_in, check_out, guest)
        for night in days(check_in, check_out - timedelta(days=1)):
            if self.guest_on(room, night):
                raise ValueError(f"{room} is taken on {night}")
        self.bookings.append(new)
        return new

    def guest_on(self, room, night):
        for b in self.bookings:
            if b.room == room and b.occupies(night):
                return b.guest
        return None

    def view(self, first, last):
        """{day: {room: guest or None}} for every day from first to last inclusive."""
        return {day: {room: self.guest_on(room, day) for room in self.rooms} for day in days(first, last)}

    def free_rooms(self, first, last):
        grid = self.view(first, last)
        return [r for r in self.rooms if all(grid[d][r] is None for d in grid)]
