import pytest

from appconfig import ConfigError, load_settings
from appconfig.loader import bind_address, example_config, reload_if_changed

CONF = """
[server]
host = 0.0.0.0
port = 9000   # behind the proxy
timeout = 2m
allowed_hosts = example.org, www.example.org
"""


def test_defaults():
    s = load_settings(environ={})
    assert (s.debug, s.port, s.timeout) == (False, 8000, 30.0)


def test_file_values():
    s = load_settings(CONF, environ={})
    assert bind_address(s) == "0.0.0.0:9000"
    assert s.timeout == 120.0
    assert s.allowed_hosts == ["example.org", "www.example.org"]


def test_environment_wins():
    s = load_settings(CONF, environ={"APP_PORT": "9100", "APP_CACHE": "off"})
    assert s.port == 9100 and s.cache is False
    assert s.origins["port"] == "environment"


@pytest.mark.parametrize("word", ["true", "True", "YES", "On", "1"])
def test_debug_from_environment(word):
    s = load_settings(environ={"APP_DEBUG": word})
    assert s.debug is True
    assert s.log_level == "debug"


def test_bad_value_names_key_and_origin():
    with pytest.raises(ConfigError, match="port from environment"):
        load_settings(environ={"APP_PORT": "eighty"})


def test_unknown_key_in_file():
    with pytest.raises(ConfigError, match="unknown key 'colour'"):
        load_settings("colour = blue", environ={})


def test_example_round_trips():
    s = load_settings(example_config(), environ={})
    assert s.values == load_settings(environ={}).values


def test_reload_reports_changes():
    current = load_settings(environ={})
    fresh, changes = reload_if_changed(current, lambda: "workers = 4", environ={})
    assert changes == ["workers: 2 -> 4"]
