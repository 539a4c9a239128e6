"""Recursive merging of nested settings dictionaries."""


def deep_merge(base, override):
    """Return base updated with override; nested dicts merge key by key.

    Lists and scalars in override replace those in base. Neither argument is
    modified.
    """
    result = base
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = value
    return result


def flatten(settings, prefix=""):
    """{'a': {'b': 1}} -> {'a.b': 1}, for display and diffing."""
    flat = {}
    for key, value in settings.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, path + "."))
        else:
            flat[path] = value
    return flat
