"""Thumbnail service: renders (here: fakes) thumbnails and caches them."""
from lrucache import LRUCache


class ThumbnailService:
    def __init__(self, renderer, cache_size=64):
        self._render = renderer
        self.cache = LRUCache(cache_size)

    def thumbnail(self, image_id, size=128):
        return self.cache.get_or_load((image_id, size), lambda key: self._render(*key))
