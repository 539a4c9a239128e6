from shop.cart import Cart
from shop.prices import format_price, parse_price
from shop.receipt import receipt


def test_default_is_dollars():
    assert format_price(123456) == "$1,234.56"
    assert format_price(-5) == "-$0.05"


def test_symbol_per_currency():
    assert format_price(1999, "EUR") == "€19.99"
    assert format_price(1999, currency="GBP") == "£19.99"


def test_parse_round_trip():
    assert parse_price(format_price(98765, "GBP")) == 98765


def test_cart_summary_in_euros():
    cart = Cart("EUR").add("croissant", 180, 2).add("coffee", 250)
    assert cart.summary() == ["2 x croissant @ €1.80", "1 x coffee @ €2.50", "Total: €6.10"]


def test_receipt_in_pounds():
    cart = Cart("GBP").add("tea", 350, 2)
    text = receipt(cart, "A17", 1000)
    assert "£7.00" in text and "£3.00" in text and "$" not in text


def test_dollar_receipt_unchanged():
    text = receipt(Cart().add("pen", 125, 4), "B2", 500)
    assert text.splitlines()[2] == "4 pen                      $5.00"
