from shop.cart import cart_total
from shop.orders import can_order
from shop.stock import in_stock
from shop.tax import with_tax


def test_with_tax():
    assert with_tax(10) == 12.0


def test_cart_total():
    assert cart_total([5, 5]) == 12.0


def test_in_stock():
    assert in_stock({"pen": 2}, "pen") and not in_stock({}, "pen")


def test_can_order():
    assert can_order({"pen": 1, "ink": 3}, ["pen", "ink"]) and not can_order({"pen": 1}, ["pen", "ink"])
