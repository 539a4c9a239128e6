from .loader import ConfigError, Settings, load_settings

__all__ = ["ConfigError", "Settings", "load_settings"]
