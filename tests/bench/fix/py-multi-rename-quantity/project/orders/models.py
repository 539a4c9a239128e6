"""Order data: line items and orders."""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LineItem:
    sku: str
    qty: int
    unit_cents: int

    def __post_init__(self):
        if self.qty <= 0:
            raise ValueError(f"{self.sku}: quantity must be positive")


@dataclass
class Order:
    order_id: str
    customer: str
    items: list = field(default_factory=list)

    def add(self, sku, qty, unit_cents):
        for i, item in enumerate(self.items):
            if item.sku == sku and item.unit_cents == unit_cents:
                self.items[i] = LineItem(sku, item.qty + qty, unit_cents)
                return self
        self.items.append(LineItem(sku, qty, unit_cents))
        return self

    def units(self):
        return sum(item.qty for item in self.items)
