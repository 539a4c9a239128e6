"""Small invoicing helpers: line items, taxes and totals in integer cents."""
from .invoice import Invoice, LineItem
from .money import format_cents, to_cents

__all__ = ["Invoice", "LineItem", "format_cents", "to_cents"]
