from billing.money import allocate, apply_rate, format_cents


def test_format_negative():
    assert format_cents(-1050) == "-$10.50"


def test_allocate_sums_back():
    assert allocate(100, 3) == [34, 33, 33]


def test_apply_rate_rounds_half_up():
    assert apply_rate(150, 5) == 8
