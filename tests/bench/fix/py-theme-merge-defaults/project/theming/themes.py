"""Per-user themes layered over the site default."""
from .merge import deep_merge, flatten

DEFAULT_THEME = {
    "colors": {"background": "#ffffff", "text": "#222222", "accent": "#0066cc"},
    "font": {"family": "system-ui", "size": 16},
    "compact": False,
}


class ThemeStore:
    def __init__(self, default=DEFAULT_THEME):
        self.default = default
        self._custom = {}

    def customise(self, user, changes):
        self._custom[user] = deep_merge(self._custom.get(user, {}), changes)

    def theme_for(self, user):
        return deep_merge(self.default, self._custom.get(user, {}))

    def css_variables(self, user):
        flat = flatten(self.theme_for(user))
        return {f"--{k.replace('.', '-')}": v for k, v in flat.items() if not isinstance(v, bool)}
