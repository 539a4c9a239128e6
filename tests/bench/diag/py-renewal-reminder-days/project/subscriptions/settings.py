"""The renewal job's settings file: `key = value` lines, `#` comments."""


def load_settings(text: str) -> dict[str, str]:
    settings: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"line {number}: expected `key = value`")
        settings[key.strip()] = value.strip()
    return settings
