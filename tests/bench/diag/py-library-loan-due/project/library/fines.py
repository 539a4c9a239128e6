"""Late fines: 20 cents a day, capped at the price of a paperback."""
from datetime import date

from .loans import Loan

CENTS_PER_DAY = 20
CAP_CENTS = 1200


def days_late(loan: Loan, returned: date) -> int:
    return max(0, (returned - loan.due).days)


def fine_cents(loan: Loan, returned: date) -> int:
    return min(CAP_CENTS, days_late(loan, returned) * CENTS_PER_DAY)


def member_fines(loans: list[Loan], returned: date) -> dict[str, int]:
    totals: dict[str, int] = {}
    for loan in loans:
        fine = fine_cents(loan, returned)
        if fine:
            totals[loan.member] = totals.get(loan.member, 0) + fine
    return totals
