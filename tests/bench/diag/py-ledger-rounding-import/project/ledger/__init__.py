"""A small double-entry ledger with amounts in Decimal."""
from .entries import Ledger, round_cents

__all__ = ["Ledger", "round_cents"]
