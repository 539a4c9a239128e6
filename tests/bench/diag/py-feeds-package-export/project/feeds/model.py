from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    title: str
    link: str
    published: str  # ISO 8601, so that string order is time order
