"""Fixed-width histograms rendered as text bars."""


class Histogram:
    def __init__(self, low, high, bins=10):
        if high <= low:
            raise ValueError("high must exceed low")
        if bins < 1:
            raise ValueError("need at least one bin")
        self.low, self.high, self.bins = low, high, bins
        self.counts = [0] * bins
        self.outside = 0

    @property
    def width(self):
        return (self.high - self.low) / self.bins

    def bin_index(self, value):
        """Index of the bin holding value; the range is [low, high], both ends included."""
        if value < self.low or value > self.high:
            return None
        return int((value - self.low) / self.width)

    def add(self, value):
        index = self.bin_index(value)
        if index is None:
            self.outside += 1
        else:
            self.counts[index] += 1

    def extend(self, values):
        for value in values:
            self.add(value)
        return self

    def edges(self):
        return [self.low + i * self.width for i in range(self.bins + 1)]

    def render(self, bar_width=20, char="#"):
        peak = max(self.counts) or 1
        lines = []
        edges = self.edges()
        for i, count in enumerate(self.counts):
            bar = char * round(bar_width * count / peak)
            lines.append(f"{edges[i]:>6g}-{edges[i + 1]:<6g} | {bar} {count}")
        if self.outside:
            lines.append(f"{self.outside} outside the range")
        return "\n".join(lines)
