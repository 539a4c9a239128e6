import pytest

from cart import Cart, apply_discount


def test_total_without_discount():
    cart = Cart()
    cart.add("pen", 150, 2)
    cart.add("notebook", 400)
    assert cart.total() == 700


def test_ten_percent_off():
    cart = Cart()
    cart.add("pen", 150, 2)
    cart.add("notebook", 400)
    assert cart.total(discount_percent=10) == 630


def test_discount_bounds():
    with pytest.raises(ValueError):
        apply_discount(100, 120)
