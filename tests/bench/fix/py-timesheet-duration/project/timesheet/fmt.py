"""Formatting helpers shared by the timesheet reports."""


def hms(seconds):
    """Seconds -> '1h 05m', or '42m' under an hour, or '0m' for nothing."""
    seconds = int(round(seconds))
    if seconds < 0:
        raise ValueError("negative duration")
    hours = seconds // 3600
    minutes = seconds // 60
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m"


def percent(part, whole):
    if whole == 0:
        return "  -"
    return f"{100 * part / whole:3.0f}%"


def table(rows, headers):
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(headers)] + [line(r) for r in rows]
