"""Ledger entries: every posting moves an amount from one account to another."""
from dataclasses import dataclass, field
from decimal import Decimal


def round_cents(amount: Decimal) -> Decimal:
    """Rounds to the cent the way the bank statements do: halves go up."""
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@dataclass
class Posting:
    debit: str
    credit: str
    amount: Decimal
    memo: str = ""


@dataclass
class Ledger:
    postings: list = field(default_factory=list)

    def post(self, debit, credit, amount, memo=""):
        amount = round_cents(Decimal(str(amount)))
        if amount <= 0:
            raise ValueError("a posting moves a positive amount")
        self.postings.append(Posting(debit, credit, amount, memo))
        return amount

    def balance(self, account):
        total = Decimal("0.00")
        for p in self.postings:
            if p.debit == account:
                total += p.amount
            if p.credit == account:
                total -= p.amount
        return total

    def trial_balance(self):
        accounts = sorted({p.debit for p in self.postings} | {p.credit for p in self.postings})
        return {name: self.balance(name) for name in accounts}
