"""Totals with volume discounts: 5 % off a line from 10 units, 10 % from 50."""
from .models import Order

TIERS = ((50, 10), (10, 5))


def line_discount_percent(qty):
    for threshold, percent in TIERS:
        if qty >= threshold:
            return percent
    return 0


def line_total(item):
    gross = item.qty * item.unit_cents
    return gross - gross * line_discount_percent(item.qty) // 100


def order_total(order: Order):
    return sum(line_total(item) for item in order.items)
