"""Reading and writing orders as JSON."""
import json

from .models import LineItem, Order


def order_from_json(text):
    data = json.loads(text)
    order = Order(data["id"], data["customer"])
    for raw in data.get("items", []):
        order.items.append(LineItem(raw["sku"], int(raw["qty"]), int(raw["unit_cents"])))
    return order


def order_to_json(order):
    return json.dumps({
        "id": order.order_id,
        "customer": order.customer,
        "items": [{"sku": i.sku, "qty": i.qty, "unit_cents": i.unit_cents} for i in order.items],
    }, sort_keys=True)
