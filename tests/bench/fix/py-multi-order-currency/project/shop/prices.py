"""Price formatting. Amounts are integer minor units (cents, pence)."""

SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def format_price(minor):
    """123456 -> '$1,234.56'."""
    sign = "-" if minor < 0 else ""
    whole, frac = divmod(abs(minor), 100)
    return f"{sign}$" + f"{whole:,}.{frac:02d}"


def parse_price(text):
    """'$1,234.56' or '1234.56' -> 123456."""
    cleaned = text.strip().lstrip("".join(SYMBOLS.values())).replace(",", "")
    whole, _, frac = cleaned.partition(".")
    return int(whole or 0) * 100 + int((frac + "00")[:2])
