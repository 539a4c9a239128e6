from decimal import Decimal

from ledger import Ledger, round_cents


def test_halves_round_up():
    assert round_cents(Decimal("0.125")) == Decimal("0.13")
    assert round_cents(Decimal("2.665")) == Decimal("2.67")
    assert round_cents(Decimal("1.004")) == Decimal("1.00")


def test_postings_balance_out():
    book = Ledger()
    book.post("cash", "sales", "19.995", memo="till")
    book.post("rent", "cash", 12.5)
    assert book.balance("cash") == Decimal("7.50")
    assert sum(book.trial_balance().values()) == 0


def test_zero_posting_is_refused():
    try:
        Ledger().post("cash", "sales", "0.004")
    except ValueError:
        return
    raise AssertionError("a posting that rounds to zero was accepted")
