from theming.themes import ThemeStore


def test_custom_accent():
    store = ThemeStore()
    store.customise("ana", {"colors": {"accent": "#ff8800"}})
    theme = store.theme_for("ana")
    assert theme["colors"]["accent"] == "#ff8800"
    assert theme["colors"]["text"] == "#222222"


def test_customisation_stays_with_its_user():
    store = ThemeStore()
    store.customise("ana", {"colors": {"background": "#000000"}, "compact": True})
    store.theme_for("ana")
    other = store.theme_for("bo")
    assert other["colors"]["background"] == "#ffffff"
    assert other["compact"] is False


def test_css_variables():
    store = ThemeStore()
    store.customise("cy", {"font": {"size": 18}})
    css = store.css_variables("cy")
    assert css["--font-size"] == 18 and "--compact" not in css
