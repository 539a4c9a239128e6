from shop.tax import with_tax


def cart_total(prices):
    return with_tax(sum(prices))
