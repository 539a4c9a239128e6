"""Checkout: cart lines, coupon, shipping."""
from .coupons import apply_coupon

FREE_SHIPPING_FROM = 5000
SHIPPING = 495


def subtotal(lines):
    return sum(unit * qty for _sku, unit, qty in lines)


def shipping_for(subtotal_cents):
    """Shipping is free from 50.00 of goods, before any coupon."""
    return 0 if subtotal_cents >= FREE_SHIPPING_FROM else SHIPPING


def checkout_total(lines, code=None):
    """What the customer pays, in cents."""
    if not lines:
        raise ValueError("empty cart")
    goods = subtotal(lines)
    discounted = apply_coupon(goods, code)
    shipping = shipping_for(goods)
    return goods + shipping


def receipt(lines, code=None):
    rows = [f"{sku:<10}{qty:>3} x {unit / 100:>7.2f}" for sku, unit, qty in lines]
    rows.append(f"{'TOTAL':<10}{checkout_total(lines, code) / 100:>17.2f}")
    return "\n".join(rows)
