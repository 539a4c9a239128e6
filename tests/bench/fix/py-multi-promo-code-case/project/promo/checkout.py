"""Applying a promo code at checkout and printing the totals."""
from .codes import Registry


def apply_code(registry: Registry, subtotal_cents, code):
    promo = registry.redeem(code)
    discount = promo.discount(subtotal_cents)
    return {
        "code": code,
        "subtotal": subtotal_cents,
        "discount": discount,
        "total": subtotal_cents - discount,
    }


def receipt_lines(result):
    def money(cents):
        return f"{cents / 100:.2f}"

    return [
        f"Subtotal        {money(result['subtotal']):>8}",
        f"Code {result['code']:<10} -{money(result['discount']):>7}",
        f"Total           {money(result['total']):>8}",
    ]
