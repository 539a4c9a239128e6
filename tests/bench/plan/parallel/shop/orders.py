from shop.stock import in_stock


def can_order(counts, items):
    return all(in_stock(counts, i) for i in items)
