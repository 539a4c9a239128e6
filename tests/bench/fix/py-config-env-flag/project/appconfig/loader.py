"""Application settings from defaults, an INI-style file and the environment.

Precedence, later wins: the defaults in SCHEMA, the config file, then
environment variables named APP_<KEY> (upper case). Every value is coerced to
the type declared in SCHEMA and validated; an error names the key, the value
and where the value came from.
"""
import os
from dataclasses import dataclass, field

from .coerce import COERCERS, CoerceError

ENV_PREFIX = "APP_"

# key -> (type, default, validator or None)
SCHEMA = {
    "debug": (bool, False, None),
    "host": (str, "127.0.0.1", None),
    "port": (int, 8000, lambda v: 0 < v < 65536),
    "workers": (int, 2, lambda v: v >= 1),
    "timeout": ("duration", 30.0, lambda v: v > 0),
    "allowed_hosts": (list, ["localhost"], None),
    "ratio": (float, 0.5, lambda v: 0.0 <= v <= 1.0),
    "log_level": (str, "info", lambda v: v in ("debug", "info", "warning", "error")),
    "cache": (bool, True, None),
}


class ConfigError(Exception):
    pass


@dataclass
class Settings:
    values: dict
    origins: dict = field(default_factory=dict)

    def __getattr__(self, name):
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    def describe(self):
        width = max(len(k) for k in self.values)
        return "\n".join(
            f"{key:<{width}} = {self.values[key]!r}  ({self.origins.get(key, 'default')})"
            for key in sorted(self.values)
        )


def parse_config_text(text, source="<config>"):
    """Parse 'key = value' lines; '#' starts a comment; [sections] are ignored."""
    values = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line or (line.startswith("[") and line.endswith("]")):
            continue
        if "=" not in line:
            raise ConfigError(f"{source}:{lineno}: expected 'key = value', got {raw!r}")
        key, value = (part.strip() for part in line.split("=", 1))
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key.lower()] = value
    return values


def env_values(environ):
    values = {}
    for name, value in environ.items():
        if name.startswith(ENV_PREFIX):
            values[name[len(ENV_PREFIX):].lower()] = value
    return values


def _coerce(key, value, origin):
    kind, _, validator = SCHEMA[key]
    try:
        typed = COERCERS[kind](value)
    except CoerceError as exc:
        raise ConfigError(f"{key} from {origin}: {exc}") from None
    if validator is not None and not validator(typed):
        raise ConfigError(f"{key} from {origin}: value {typed!r} is out of range")
    return typed


def load_settings(config_text=None, environ=None, source="app.conf", strict=True):
    """Build Settings; unknown keys are errors when strict, ignored otherwise."""
    environ = os.environ if environ is None else environ
    values = {key: default for key, (_, default, _) in SCHEMA.items()}
    origins = {}
    layers = []
    if config_text:
        layers.append((source, parse_config_text(config_text, source)))
    layers.append(("environment", env_values(environ)))
    for origin, layer in layers:
        for key, raw in layer.items():
            if key not in SCHEMA:
                if strict and origin != "environment":
                    raise ConfigError(f"{origin}: unknown key {key!r}")
                continue
            values[key] = _coerce(key, raw, origin)
            origins[key] = origin
    if values["debug"] and values["log_level"] == "info" and "log_level" not in origins:
        # Debug mode without an explicit level means the user wants to see everything.
        values["log_level"] = "debug"
    return Settings(values, origins)


def bind_address(settings):
    host = settings.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{settings.port}"


def diff_settings(old, new):
    """Keys whose value changed between two Settings, for reload logging."""
    changes = []
    for key in sorted(set(old.values) | set(new.values)):
        before, after = old.values.get(key), new.values.get(key)
        if before != after:
            changes.append(f"{key}: {before!r} -> {after!r}")
    return changes


def reload_if_changed(current, read_text, environ=None):
    """Re-read the config; return (settings, changes). Errors keep the current settings."""
    try:
        fresh = load_settings(read_text(), environ)
    except ConfigError as exc:
        return current, [f"reload failed: {exc}"]
    return fresh, diff_settings(current, fresh)


def example_config():
    """A commented config file with every key at its default, for `app --print-config`."""
    lines = ["# app.conf: every key at its default"]
    for key, (kind, default, _) in SCHEMA.items():
        if kind is list:
            shown = ", ".join(default)
        elif kind is bool:
            shown = "true" if default else "false"
        elif kind == "duration":
            shown = f"{default:g}s"
        else:
            shown = default
        lines.append(f"{key} = {shown}")
    return "\n".join(lines) + "\n"


def require(settings, *keys):
    """Fail early, naming every key that a command needs but that is empty."""
    missing = [key for key in keys if settings.values.get(key) in (None, "", [])]
    if missing:
        raise ConfigError(f"missing settings: {', '.join(missing)}")
    return settings
