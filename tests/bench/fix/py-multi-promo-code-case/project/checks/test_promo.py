import pytest

from promo.checkout import apply_code, receipt_lines
from promo.codes import CodeExhausted, Registry, UnknownCode


def registry():
    reg = Registry()
    reg.register("SPRING10", percent=10)
    reg.register("Welcome5", fixed_cents=500, max_uses=1)
    return reg


def test_exact_code():
    assert apply_code(registry(), 2000, "SPRING10")["total"] == 1800


def test_code_typed_in_lower_case():
    result = apply_code(registry(), 2000, "  spring10 ")
    assert result["discount"] == 200
    assert receipt_lines(result)[1] == "Code SPRING10   -   2.00"


def test_mixed_case_registration():
    reg = registry()
    assert apply_code(reg, 1000, "WELCOME5")["total"] == 500
    with pytest.raises(CodeExhausted):
        apply_code(reg, 1000, "welcome5")


def test_duplicate_in_other_case_rejected():
    with pytest.raises(ValueError):
        registry().register("spring10", percent=20)


def test_unknown_code():
    with pytest.raises(UnknownCode):
        apply_code(registry(), 1000, "NOPE")
