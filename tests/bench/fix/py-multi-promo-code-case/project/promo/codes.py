"""Promo code registry: percentage or fixed discounts with usage limits."""
from dataclasses import dataclass


class UnknownCode(KeyError):
    pass


class CodeExhausted(Exception):
    pass


@dataclass
class PromoCode:
    code: str
    percent: int = 0
    fixed_cents: int = 0
    max_uses: int = 0  # 0: unlimited
    uses: int = 0

    def discount(self, subtotal_cents):
        off = subtotal_cents * self.percent // 100 + self.fixed_cents
        return min(off, subtotal_cents)


class Registry:
    def __init__(self):
        self._codes = {}

    def register(self, code, percent=0, fixed_cents=0, max_uses=0):
        if code in self._codes:
            raise ValueError(f"code {code} already exists")
        promo = PromoCode(code, percent, fixed_cents, max_uses)
        self._codes[code] = promo
        return promo

    def lookup(self, code):
        try:
            return self._codes[code]
        except KeyError:
            raise UnknownCode(code) from None

    def redeem(self, code):
        promo = self.lookup(code)
        if promo.max_uses and promo.uses >= promo.max_uses:
            raise CodeExhausted(promo.code)
        promo.uses += 1
        return promo
