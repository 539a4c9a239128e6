"""Room rates and reservations."""
from dataclasses import dataclass
from datetime import date, timedelta

RATES = {"single": 8900, "double": 12900, "suite": 24900}
CITY_TAX_PER_NIGHT = 250


@dataclass
class Reservation:
    guest: str
    room_type: str
    arrival: date
    night_count: int = 1
    breakfast: bool = False

    @property
    def departure(self) -> date:
        return self.arrival + timedelta(days=self.night_count)

    def total_cents(self) -> int:
        nightly = RATES[self.room_type] + CITY_TAX_PER_NIGHT + (1500 if self.breakfast else 0)
        return nightly * self.night_count
