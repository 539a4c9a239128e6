from deployconf.parse import parse_port, parse_target, privileged


def test_port_is_a_number():
    assert parse_port(" 8080 ") == 8080


def test_urls_omit_default_ports():
    assert parse_target("web example.org:443 tls").url == "https://example.org"
    assert parse_target("api 10.0.0.5:8443 tls").url == "https://10.0.0.5:8443"
    assert parse_target("legacy old.example.org:80").url == "http://old.example.org"


def test_privileged_ports():
    targets = [parse_target("web example.org:443 tls"), parse_target("api 10.0.0.5:8443 tls")]
    assert privileged(targets) == ["web"]


def test_bad_ports():
    for bad in ("web example.org:http", "web example.org:70000"):
        try:
            parse_target(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
