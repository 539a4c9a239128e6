from shop.checkout import checkout_total, receipt

CART = [("MUG", 1250, 2), ("TEA", 899, 1)]  # 33.99


def test_total_without_coupon_adds_shipping():
    assert checkout_total(CART) == 3399 + 495


def test_percent_coupon():
    assert checkout_total(CART, "spring10") == 3399 - 339 + 495


def test_fixed_coupon_keeps_free_shipping_threshold_on_goods():
    big = [("KETTLE", 5200, 1)]
    assert checkout_total(big, "FIVEOFF") == 4700


def test_unknown_coupon_changes_nothing():
    assert checkout_total(CART, "BOGUS") == 3894
    assert receipt(CART, "BOGUS").endswith("38.94")
