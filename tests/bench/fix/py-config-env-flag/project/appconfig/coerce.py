"""Turning configuration strings (from files or the environment) into typed values."""

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off", "")


class CoerceError(ValueError):
    pass


def to_bool(value):
    if isinstance(value, bool):
        return value
    text = str(value).strip()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise CoerceError(f"not a boolean: {value!r}")


def to_int(value):
    if isinstance(value, bool):
        raise CoerceError("a boolean is not an integer")
    try:
        return int(str(value).strip().replace("_", ""))
    except ValueError:
        raise CoerceError(f"not an integer: {value!r}") from None


def to_float(value):
    try:
        return float(str(value).strip())
    except ValueError:
        raise CoerceError(f"not a number: {value!r}") from None


def to_list(value):
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value]
    return [part.strip() for part in str(value).split(",") if part.strip()]


def to_duration(value):
    """'30s', '5m', '2h' or a plain number of seconds -> seconds as float."""
    text = str(value).strip().lower()
    scale = {"s": 1, "m": 60, "h": 3600}
    if text and text[-1] in scale:
        return to_float(text[:-1]) * scale[text[-1]]
    return to_float(text)


COERCERS = {
    bool: to_bool,
    int: to_int,
    float: to_float,
    list: to_list,
    "duration": to_duration,
    str: lambda v: str(v),
}
