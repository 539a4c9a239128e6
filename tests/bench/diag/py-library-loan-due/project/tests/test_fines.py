from datetime import date

from library.fines import fine_cents, member_fines
from library.loans import lend, renew

MAY_1 = date(2024, 5, 1)


def test_on_time_costs_nothing():
    loan = lend("978-0141439518", "m-17", MAY_1)
    assert fine_cents(loan, date(2024, 5, 22)) == 0


def test_late_days_are_fined_up_to_the_cap():
    loan = lend("978-0141439518", "m-17", MAY_1)
    assert fine_cents(loan, date(2024, 5, 25)) == 60
    assert fine_cents(loan, date(2024, 9, 1)) == 1200


def test_renewal_moves_the_due_date():
    loan = renew(lend("978-0007458424", "m-3", MAY_1), date(2024, 5, 20))
    assert fine_cents(loan, date(2024, 6, 12)) == 0
    assert fine_cents(loan, date(2024, 6, 14)) == 40


def test_fines_per_member():
    loans = [lend("a", "m-1", MAY_1), lend("b", "m-1", MAY_1), lend("c", "m-2", date(2024, 5, 20))]
    assert member_fines(loans, date(2024, 5, 27)) == {"m-1": 200}
