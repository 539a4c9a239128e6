import xml.etree.ElementTree as ET
from email.utils import parsedate_to_datetime

from .model import Entry


def parse_rss(xml_text):
    root = ET.fromstring(xml_text)
    entries = []
    for item in root.iter("item"):
        when = parsedate_to_datetime(item.findtext("pubDate", "")).isoformat()
        entries.append(Entry(item.findtext("title", "").strip(), item.findtext("link", "").strip(), when))
    return entries
