from webkit.auth import sign, verify
from webkit.query import build_query, parse_query

SECRET = b"s3cret"


def test_parse_repeated_and_flags():
    assert parse_query("?a=1&b=x+y&a=2&flag") == {"a": ["1", "2"], "b": ["x y"], "flag": [""]}


def test_signed_link_round_trip():
    sig = sign(SECRET, "report.pdf", 2000)
    assert sig.endswith("==")  # 16 bytes of base64 always end in padding
    qs = f"file=report.pdf&expires=2000&sig={sig}"
    assert verify(SECRET, qs, now=1000)


def test_expired_link():
    sig = sign(SECRET, "a.zip", 10)
    assert not verify(SECRET, f"file=a.zip&expires=10&sig={sig}", now=11)


def test_build_then_parse():
    qs = build_query({"q": "a&b", "page": 2})
    assert parse_query(qs) == {"q": ["a&b"], "page": ["2"]}
