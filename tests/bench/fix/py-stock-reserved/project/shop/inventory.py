"""Stock levels per SKU, with reservations for orders awaiting payment."""
from dataclasses import dataclass


class OutOfStock(Exception):
    def __init__(self, sku, wanted, available):
        super().__init__(f"{sku}: wanted {wanted}, only {available} available")
        self.sku, self.wanted, self.available = sku, wanted, available


@dataclass
class StockLevel:
    on_hand: int = 0
    reserved: int = 0

    @property
    def available(self):
        return self.on_hand - self.reserved


class Inventory:
    def __init__(self):
        self._levels = {}

    def level(self, sku):
        return self._levels.setdefault(sku, StockLevel())

    def receive(self, sku, qty):
        if qty <= 0:
            raise ValueError("qty must be positive")
        self.level(sku).on_hand += qty

    def reserve(self, sku, qty):
        """Hold qty units for an unpaid order."""
        lvl = self.level(sku)
        if qty > lvl.available:
            raise OutOfStock(sku, qty, lvl.available)
        lvl.reserved += qty

    def release(self, sku, qty):
        lvl = self.level(sku)
        lvl.reserved = max(0, lvl.reserved - qty)

    def commit_reservation(self, sku, qty):
        """A paid order: the held units leave the shelf."""
        lvl = self.level(sku)
        lvl.reserved -= qty
        lvl.on_hand -= qty

    def sell(self, sku, qty):
        """Immediate sale without a prior reservation (point of sale, instant checkout)."""
        lvl = self.level(sku)
        if qty > lvl.on_hand:
            raise OutOfStock(sku, qty, lvl.available)
        lvl.on_hand -= qty
