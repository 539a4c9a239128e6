"""Shopping cart with per-line prices and a currency fixed when the cart is created."""
from dataclasses import dataclass, field

from .prices import format_price


@dataclass
class Cart:
    currency: str = "USD"
    lines: list = field(default_factory=list)

    def add(self, name, unit_minor, quantity=1):
        self.lines.append((name, unit_minor, quantity))
        return self

    def total(self):
        return sum(unit * qty for _, unit, qty in self.lines)

    def summary(self):
        rows = [f"{qty} x {name} @ {format_price(unit)}" for name, unit, qty in self.lines]
        rows.append(f"Total: {format_price(self.total())}")
        return rows
