from .pages import Page, paginate

__all__ = ["Page", "paginate"]
