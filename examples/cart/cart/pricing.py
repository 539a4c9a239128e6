"""Prices in integer cents, so no money is lost to floating point."""


def line_total(unit_cents, quantity):
    """The price of `quantity` items costing `unit_cents` each."""
    return unit_cents * quantity


def apply_discount(cents, percent):
    """`cents` reduced by `percent` percent, rounded down to a whole cent."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be between 0 and 100")
    return cents - cents * percent // 10
