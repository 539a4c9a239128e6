"""Text helpers for the blog engine: slugs, excerpts and reading time."""
import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")
WORDS_PER_MINUTE = 200


def slugify(title, max_length=60):
    """Lower-case ASCII slug: words joined by single dashes, no dash at either end."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = _NON_WORD.sub("-", text.lower()).lstrip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit("-", 1)[0]
    return slug


def excerpt(body, limit=160):
    """First sentences of body up to limit characters, ending with an ellipsis when cut."""
    flat = " ".join(body.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def reading_minutes(body):
    words = len(body.split())
    return max(1, round(words / WORDS_PER_MINUTE))
