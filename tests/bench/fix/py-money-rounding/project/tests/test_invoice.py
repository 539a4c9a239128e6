from billing import Invoice, format_cents


def test_subtotal_of_single_item():
    inv = Invoice("A-1").add("Widget", 12.5, 2)
    assert inv.subtotal_cents() == 2500


def test_subtotal_matches_printed_prices():
    inv = Invoice("A-2").add("Cable", 0.29, 1).add("Adapter", 19.99, 3).add("Sticker", 4.35, 2)
    # 0.29 + 3 * 19.99 + 2 * 4.35 = 68.96
    assert format_cents(inv.subtotal_cents()) == "$68.96"


def test_tax_and_discount():
    inv = Invoice("A-3", tax_rate=10).add("Desk", 200, 1)
    inv.discount_cents = 5000
    assert inv.tax_cents() == 1500
    assert inv.total_cents() == 16500


def test_render_lists_items():
    text = Invoice("A-4").add("Lamp", 30, 1).render()
    assert "Lamp" in text and "$30.00" in text
