"""Plain-text receipts for paid carts."""
from .prices import format_price


def receipt(cart, order_id, paid_minor):
    width = 32
    lines = [f"Order {order_id}".center(width), "-" * width]
    for name, unit, qty in cart.lines:
        amount = format_price(unit * qty)
        lines.append(f"{qty} {name}".ljust(width - len(amount)) + amount)
    lines.append("-" * width)
    total = format_price(cart.total())
    lines.append("Total".ljust(width - len(total)) + total)
    change = format_price(paid_minor - cart.total())
    lines.append("Change".ljust(width - len(change)) + change)
    return "\n".join(lines)
