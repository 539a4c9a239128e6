"""Greedy word wrapping for command-line help output."""


def wrap(text, width=80, indent=""):
    """Split text into lines of at most `width` characters (indent included).

    Words longer than the available width are put on a line of their own
    rather than broken.
    """
    if width <= len(indent):
        raise ValueError("width must exceed the indent")
    lines = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(indent) + len(current) + len(word) <= width:
            current += " " + word
        else:
            lines.append(indent + current)
            current = word
    if current:
        lines.append(indent + current)
    return lines


def columns(rows, gap=2, width=80):
    """Two-column help table: names padded to the widest, descriptions wrapped."""
    if not rows:
        return []
    name_width = max(len(name) for name, _ in rows) + gap
    out = []
    for name, desc in rows:
        wrapped = wrap(desc, width, indent=" " * name_width) or [" " * name_width]
        out.append(name.ljust(name_width) + wrapped[0][name_width:])
        out.extend(wrapped[1:])
    return out
