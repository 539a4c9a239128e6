"""Invoices: a list of line items, an optional discount and a tax rate."""
from dataclasses import dataclass, field

from .money import apply_rate, format_cents, to_cents


@dataclass
class LineItem:
    description: str
    unit_price: float
    quantity: int = 1

    @property
    def unit_cents(self):
        return to_cents(self.unit_price)

    @property
    def total_cents(self):
        return self.unit_cents * self.quantity


@dataclass
class Invoice:
    number: str
    items: list = field(default_factory=list)
    tax_rate: float = 0.0
    discount_cents: int = 0

    def add(self, description, unit_price, quantity=1):
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items.append(LineItem(description, unit_price, quantity))
        return self

    def subtotal_cents(self):
        return sum(item.total_cents for item in self.items)

    def tax_cents(self):
        return apply_rate(self.subtotal_cents() - self.discount_cents, self.tax_rate)

    def total_cents(self):
        return self.subtotal_cents() - self.discount_cents + self.tax_cents()

    def render(self):
        lines = [f"Invoice {self.number}"]
        for item in self.items:
            lines.append(
                f"  {item.description:<20} {item.quantity:>3} x "
                f"{format_cents(item.unit_cents):>10} = {format_cents(item.total_cents):>10}"
            )
        if self.discount_cents:
            lines.append(f"  {'Discount':<37} -{format_cents(self.discount_cents)}")
        lines.append(f"  {'Tax':<37} {format_cents(self.tax_cents())}")
        lines.append(f"  {'Total':<37} {format_cents(self.total_cents())}")
        return "\n".join(lines)
