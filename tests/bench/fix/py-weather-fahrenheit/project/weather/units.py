"""Unit conversions for station readings. Internally everything is metric."""

KMH_PER_MPH = 1.609344
HPA_PER_INHG = 33.8639
MM_PER_INCH = 25.4


def fahrenheit_to_celsius(f):
    return f - 32 * 5 / 9


def celsius_to_fahrenheit(c):
    return c * 9 / 5 + 32


def mph_to_kmh(mph):
    return mph * KMH_PER_MPH


def inhg_to_hpa(inhg):
    return inhg * HPA_PER_INHG


def inches_to_mm(inches):
    return inches * MM_PER_INCH


CONVERTERS = {
    "temperature": {"C": lambda v: v, "F": fahrenheit_to_celsius},
    "wind": {"kmh": lambda v: v, "mph": mph_to_kmh, "ms": lambda v: v * 3.6},
    "pressure": {"hPa": lambda v: v, "inHg": inhg_to_hpa},
    "rain": {"mm": lambda v: v, "in": inches_to_mm},
}


def to_metric(quantity, value, unit):
    """Convert a value of a quantity from the given unit to the metric unit we store."""
    try:
        return CONVERTERS[quantity][unit](value)
    except KeyError:
        raise ValueError(f"unknown unit {unit!r} for {quantity}") from None
