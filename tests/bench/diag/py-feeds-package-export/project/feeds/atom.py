import xml.etree.ElementTree as ET

from .model import Entry

NS = {"a": "http://www.w3.org/2005/Atom"}


def parse_atom(xml_text):
    root = ET.fromstring(xml_text)
    entries = []
    for node in root.findall("a:entry", NS):
        link = node.find("a:link", NS)
        href = link.get("href", "") if link is not None else ""
        updated = node.findtext("a:updated", "", NS).replace("Z", "+00:00")
        entries.append(Entry(node.findtext("a:title", "", NS).strip(), href, updated))
    return entries
