import json

import pytest

from orders.jsonio import order_from_json, order_to_json
from orders.models import LineItem, Order
from orders.pricing import line_total, order_total


def test_line_item_field_is_quantity():
    item = LineItem("pen", quantity=3, unit_cents=120)
    assert item.quantity == 3
    assert not hasattr(item, "qty")


def test_merging_lines():
    order = Order("o1", "ana").add("pen", 2, 120).add("pen", 3, 120)
    assert [i.quantity for i in order.items] == [5]
    assert order.units() == 5


def test_volume_discount():
    assert line_total(LineItem("clip", 10, 50)) == 475
    assert order_total(Order("o2", "bo").add("clip", 60, 10).add("pad", 1, 300)) == 840


def test_json_accepts_both_keys_and_writes_quantity():
    text = json.dumps({"id": "o3", "customer": "cy", "items": [
        {"sku": "pen", "quantity": 2, "unit_cents": 100},
        {"sku": "pad", "qty": 1, "unit_cents": 250},
    ]})
    order = order_from_json(text)
    assert [i.quantity for i in order.items] == [2, 1]
    assert json.loads(order_to_json(order))["items"][0] == {"sku": "pen", "quantity": 2, "unit_cents": 100}


def test_zero_quantity_rejected():
    with pytest.raises(ValueError, match="quantity"):
        LineItem("pen", 0, 100)
