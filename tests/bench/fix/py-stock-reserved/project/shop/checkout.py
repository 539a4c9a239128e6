"""Checkout flows on top of the inventory."""
from .inventory import Inventory, OutOfStock


class Checkout:
    def __init__(self, inventory: Inventory):
        self.inventory = inventory

    def instant(self, cart):
        """Sell every line of cart {sku: qty} or nothing at all."""
        done = []
        try:
            for sku, qty in cart.items():
                self.inventory.sell(sku, qty)
                done.append((sku, qty))
        except OutOfStock:
            for sku, qty in done:
                self.inventory.receive(sku, qty)
            raise
        return sum(cart.values())

    def hold(self, cart):
        for sku, qty in cart.items():
            self.inventory.reserve(sku, qty)
