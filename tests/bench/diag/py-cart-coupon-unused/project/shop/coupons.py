"""Coupon codes: a percentage off, or a fixed amount off above a minimum."""

COUPONS = {
    "SPRING10": ("percent", 10, 0),
    "FIVEOFF": ("amount", 500, 3000),
}


def apply_coupon(subtotal_cents, code):
    """The subtotal after the coupon; unknown codes and unmet minimums change nothing."""
    if not code:
        return subtotal_cents
    kind, value, minimum = COUPONS.get(code.strip().upper(), (None, 0, 0))
    if kind is None or subtotal_cents < minimum:
        return subtotal_cents
    if kind == "percent":
        return subtotal_cents - subtotal_cents * value // 100
    return max(0, subtotal_cents - value)
