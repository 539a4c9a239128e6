"""Conversions between user-facing decimal amounts and integer cents.

All arithmetic inside the package is done in cents so that sums are exact;
floats only appear at the edges (prices typed by a user, rates in config).
"""


def to_cents(amount):
    """Convert a decimal amount (float, int or numeric string) to integer cents."""
    if isinstance(amount, str):
        amount = amount.strip().replace(",", "")
        if not amount:
            raise ValueError("empty amount")
        amount = float(amount)
    return int(amount * 100)


def format_cents(cents, symbol="$"):
    """Format integer cents as a price string, e.g. 123456 -> '$1,234.56'."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    whole, frac = divmod(cents, 100)
    return f"{sign}{symbol}{whole:,}.{frac:02d}"


def apply_rate(cents, rate):
    """Apply a percentage rate (e.g. 7.5 for 7.5 %) to an amount in cents, rounding half up."""
    scaled = cents * rate
    return int(scaled / 100 + 0.5) if scaled >= 0 else -int(-scaled / 100 + 0.5)


def allocate(cents, parts):
    """Split cents into `parts` shares that differ by at most one cent and sum to `cents`."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, extra = divmod(cents, parts)
    return [base + 1 if i < extra else base for i in range(parts)]
