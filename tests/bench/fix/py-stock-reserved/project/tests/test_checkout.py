import pytest

from shop.checkout import Checkout
from shop.inventory import Inventory, OutOfStock


def setup():
    inv = Inventory()
    inv.receive("mug", 5)
    inv.receive("tee", 2)
    return inv, Checkout(inv)


def test_instant_sale_updates_stock():
    inv, co = setup()
    assert co.instant({"mug": 2, "tee": 1}) == 3
    assert inv.level("mug").on_hand == 3


def test_instant_sale_is_all_or_nothing():
    inv, co = setup()
    with pytest.raises(OutOfStock):
        co.instant({"mug": 1, "tee": 3})
    assert inv.level("mug").on_hand == 5


def test_held_units_cannot_be_sold():
    inv, co = setup()
    co.hold({"tee": 2})
    with pytest.raises(OutOfStock) as err:
        co.instant({"tee": 1})
    assert err.value.available == 0
    assert inv.level("tee").on_hand == 2


def test_commit_reservation():
    inv, co = setup()
    co.hold({"mug": 4})
    inv.commit_reservation("mug", 4)
    assert inv.level("mug").available == 1
