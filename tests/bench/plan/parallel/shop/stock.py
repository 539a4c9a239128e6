def in_stock(counts, item):
    return counts.get(item, 0) > 0
