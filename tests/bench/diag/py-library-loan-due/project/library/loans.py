"""Library loans: three weeks by default, renewable twice, fined when late."""
from dataclasses import dataclass
from datetime import date, timedelta

LOAN_DAYS = 21
MAX_RENEWALS = 2


@dataclass
class Loan:
    isbn: str
    member: str
    due_date: date
    renewals: int = 0


def lend(isbn: str, member: str, today: date) -> Loan:
    return Loan(isbn, member, today + timedelta(days=LOAN_DAYS))


def renew(loan: Loan, today: date) -> Loan:
    if loan.renewals >= MAX_RENEWALS:
        raise ValueError(f"{loan.isbn} was renewed {MAX_RENEWALS} times already")
    if today > loan.due_date:
        raise ValueError(f"{loan.isbn} is overdue; return it first")
    return Loan(loan.isbn, loan.member, loan.due_date + timedelta(days=LOAN_DAYS), loan.renewals + 1)
