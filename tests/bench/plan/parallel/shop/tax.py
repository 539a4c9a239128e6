def with_tax(amount):
    return round(amount * 1.2, 2)
