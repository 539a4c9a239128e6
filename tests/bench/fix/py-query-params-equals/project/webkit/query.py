"""Query-string parsing without the standard library's lenient corner cases.

Keys may repeat; values are percent-decoded; '+' means a space. A pair with no
'=' is a flag whose value is the empty string.
"""
from urllib.parse import unquote_plus


class QueryError(ValueError):
    pass


def parse_query(qs):
    """'a=1&b=x+y&a=2&flag' -> {'a': ['1', '2'], 'b': ['x y'], 'flag': ['']}."""
    params = {}
    if qs.startswith("?"):
        qs = qs[1:]
    for pair in qs.split("&"):
        if not pair:
            continue
        if "=" in pair:
            parts = pair.split("=")
            if len(parts) != 2:
                raise QueryError(f"malformed pair: {pair!r}")
            key, value = parts
        else:
            key, value = pair, ""
        key = unquote_plus(key)
        if not key:
            raise QueryError(f"empty key in {pair!r}")
        params.setdefault(key, []).append(unquote_plus(value))
    return params


def first(params, key, default=None):
    values = params.get(key)
    return values[0] if values else default


def build_query(params):
    from urllib.parse import quote_plus

    pairs = []
    for key, values in params.items():
        for value in values if isinstance(values, list) else [values]:
            pairs.append(f"{quote_plus(key)}={quote_plus(str(value))}")
    return "&".join(pairs)
