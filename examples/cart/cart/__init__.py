"""A tiny shopping cart: items, quantities and totals in cents."""

from .pricing import line_total, apply_discount

__all__ = ["Cart", "line_total", "apply_discount"]


class Cart:
    """Items and their quantities, priced in cents."""

    def __init__(self):
        self.lines = []

    def add(self, name, unit_cents, quantity=1):
        """Adds `quantity` of an item costing `unit_cents` each."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.lines.append((name, unit_cents, quantity))

    def total(self, discount_percent=0):
        """The total in cents after a whole-cart discount."""
        subtotal = sum(line_total(unit, qty) for _, unit, qty in self.lines)
        return apply_discount(subtotal, discount_percent)
