"""Deployment targets written as `name host:port [tls]`, one per line."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    name: str
    host: str
    port: int
    tls: bool

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        default = 443 if self.tls else 80
        suffix = "" if self.port == default else f":{self.port}"
        return f"{scheme}://{self.host}{suffix}"


def parse_port(text: str) -> int:
    text = text.strip()
    if not text.isdigit():
        raise ValueError(f"port {text!r} is not a number")
    if not 0 < int(text) < 65536:
        raise ValueError(f"port {text} is out of range")
    return text


def parse_target(line: str) -> Target:
    parts = line.split()
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "tls"):
        raise ValueError(f"expected `name host:port [tls]`, got {line!r}")
    host, _, port = parts[1].rpartition(":")
    return Target(parts[0], host, parse_port(port), len(parts) == 3)


def privileged(targets: list[Target]) -> list[str]:
    """Targets that need root to bind their port."""
    return [t.name for t in targets if t.port < 1024]
