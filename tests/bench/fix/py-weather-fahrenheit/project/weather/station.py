"""Weather stations: ingest raw readings, normalise units, and summarise days.

A station uploads readings as dicts such as
    {"time": "2024-06-01T14:00", "temperature": 71.6, "wind": 5, "rain": 0.1}
in the units configured for that station. Readings are converted to metric on
ingest so that summaries and alerts never have to care about the source units.
"""
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from statistics import mean

from .units import to_metric

QUANTITIES = ("temperature", "wind", "pressure", "rain")
DEFAULT_UNITS = {"temperature": "C", "wind": "kmh", "pressure": "hPa", "rain": "mm"}

# Plausibility limits after conversion; readings outside are sensor glitches.
LIMITS = {
    "temperature": (-60.0, 60.0),
    "wind": (0.0, 400.0),
    "pressure": (850.0, 1100.0),
    "rain": (0.0, 500.0),
}


@dataclass
class Reading:
    time: datetime
    values: dict

    @property
    def day(self):
        return self.time.date().isoformat()


@dataclass
class DaySummary:
    day: str
    count: int
    temp_min: float = None
    temp_max: float = None
    temp_mean: float = None
    wind_max: float = None
    rain_total: float = 0.0
    pressure_mean: float = None

    def line(self):
        parts = [self.day, f"{self.count} readings"]
        if self.temp_mean is not None:
            parts.append(f"temp {self.temp_min:.1f}..{self.temp_max:.1f} C (mean {self.temp_mean:.1f})")
        if self.wind_max is not None:
            parts.append(f"wind max {self.wind_max:.0f} km/h")
        parts.append(f"rain {self.rain_total:.1f} mm")
        return ", ".join(parts)


@dataclass
class Station:
    name: str
    units: dict = field(default_factory=lambda: dict(DEFAULT_UNITS))
    readings: list = field(default_factory=list)
    rejected: list = field(default_factory=list)

    def __post_init__(self):
        merged = dict(DEFAULT_UNITS)
        merged.update(self.units)
        self.units = merged

    def ingest(self, raw):
        """Convert one raw reading; keep it, or record why it was rejected."""
        try:
            when = datetime.fromisoformat(raw["time"])
        except (KeyError, ValueError):
            self.rejected.append((raw, "bad time"))
            return False
        values = {}
        for quantity in QUANTITIES:
            if quantity not in raw or raw[quantity] is None:
                continue
            value = to_metric(quantity, float(raw[quantity]), self.units[quantity])
            low, high = LIMITS[quantity]
            if not low <= value <= high:
                self.rejected.append((raw, f"{quantity} out of range: {value:.1f}"))
                return False
            values[quantity] = value
        if not values:
            self.rejected.append((raw, "no values"))
            return False
        self.readings.append(Reading(when, values))
        return True

    def ingest_many(self, raws):
        return sum(1 for raw in raws if self.ingest(raw))

    def by_day(self):
        days = defaultdict(list)
        for reading in sorted(self.readings, key=lambda r: r.time):
            days[reading.day].append(reading)
        return dict(days)

    def summarise_day(self, day):
        readings = self.by_day().get(day, [])
        summary = DaySummary(day=day, count=len(readings))
        temps = [r.values["temperature"] for r in readings if "temperature" in r.values]
        if temps:
            summary.temp_min = min(temps)
            summary.temp_max = max(temps)
            summary.temp_mean = round(mean(temps), 1)
        winds = [r.values["wind"] for r in readings if "wind" in r.values]
        if winds:
            summary.wind_max = max(winds)
        summary.rain_total = round(sum(r.values.get("rain", 0.0) for r in readings), 1)
        pressures = [r.values["pressure"] for r in readings if "pressure" in r.values]
        if pressures:
            summary.pressure_mean = round(mean(pressures), 1)
        return summary

    def summaries(self):
        return [self.summarise_day(day) for day in self.by_day()]

    def frost_hours(self, threshold=0.0):
        """Times at which the temperature was at or below the threshold (Celsius)."""
        return [
            r.time for r in self.readings
            if "temperature" in r.values and r.values["temperature"] <= threshold
        ]

    def report(self):
        lines = [f"Station {self.name}: {len(self.readings)} readings, {len(self.rejected)} rejected"]
        lines += ["  " + s.line() for s in self.summaries()]
        return "\n".join(lines)


def merge_stations(name, stations):
    """One virtual station holding the readings of several (already metric)."""
    merged = Station(name)
    for station in stations:
        merged.readings.extend(station.readings)
        merged.rejected.extend(station.rejected)
    return merged


def to_csv(station, quantities=QUANTITIES):
    """Readings as CSV text (metric units), oldest first, for spreadsheet export."""
    header = ["time"] + [f"{q}_{DEFAULT_UNITS[q]}" for q in quantities]
    lines = [",".join(header)]
    for reading in sorted(station.readings, key=lambda r: r.time):
        cells = [reading.time.isoformat(timespec="minutes")]
        for q in quantities:
            value = reading.values.get(q)
            cells.append("" if value is None else f"{value:.1f}")
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"
