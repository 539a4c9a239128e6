"""Turns a booking form into a reservation."""
from datetime import date

from .rooms import RATES, Reservation


def parse_form(form: dict[str, str]) -> Reservation:
    room = form.get("room", "double").lower()
    if room not in RATES:
        raise ValueError(f"unknown room type {room!r}")
    arrival = date.fromisoformat(form["arrival"])
    departure = date.fromisoformat(form["departure"])
    nights = (departure - arrival).days
    if nights < 1:
        raise ValueError("departure must be after arrival")
    return Reservation(
        guest=form["guest"].strip(),
        room_type=room,
        arrival=arrival,
        nights=nights,
        breakfast=form.get("breakfast") == "yes",
    )
