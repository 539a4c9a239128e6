"""Posts and their permalinks."""
from dataclasses import dataclass
from datetime import date

from .text import excerpt, reading_minutes, slugify


@dataclass
class Post:
    title: str
    body: str
    published: date

    @property
    def slug(self):
        return slugify(self.title)

    @property
    def permalink(self):
        return f"/{self.published:%Y/%m}/{self.slug}/"

    def card(self):
        return {
            "title": self.title,
            "url": self.permalink,
            "summary": excerpt(self.body),
            "minutes": reading_minutes(self.body),
        }
