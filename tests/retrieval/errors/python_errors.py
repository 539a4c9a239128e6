"""Produces the Python error questions of ../python.toml: runs each snippet as
/home/dev/project/app.py would run (in a scratch folder, path rewritten) and
prints its stderr in the form the question uses: A = the whole traceback,
B = only the exception line(s), C = only the program's own frames plus the
exception. Usage: python3 python_errors.py NAME FORM
"""
import json, os, subprocess, sys, tempfile
snips = {
 "json_trailing_comma": 'import json\n\ndef load(text):\n    return json.loads(text)\n\nload(\'{"a": 1,}\')\n',
 "json_datetime": 'import json, datetime\n\ndef save(record):\n    return json.dumps(record)\n\nsave({"when": datetime.datetime(2024, 5, 1)})\n',
 "subprocess_check": 'import subprocess\n\nsubprocess.run(["false"], check=True)\n',
 "subprocess_timeout": 'import subprocess\n\nsubprocess.run(["sleep", "5"], timeout=0.2)\n',
 "strptime": 'from datetime import datetime\n\ndef parse_day(s):\n    return datetime.strptime(s, "%Y-%m-%d")\n\nparse_day("2020-13-01")\n',
 "ipv6url": 'from urllib.parse import urlsplit\n\nprint(urlsplit("http://[::1/index.html"))\n',
 "ipaddress": 'import ipaddress\n\nipaddress.ip_address("300.1.1.1")\n',
 "configparser_nosection": 'import configparser\n\ncfg = configparser.ConfigParser()\ncfg.read_string("[server]\\nport = 80\\n")\nprint(cfg.get("db", "host"))\n',
 "configparser_dup": 'import configparser\n\ncfg = configparser.ConfigParser()\ncfg.read_string("[x]\\na = 1\\na = 2\\n")\n',
 "fraction_zero": 'from fractions import Fraction\n\nFraction(1, 0)\n',
 "statistics_mean": 'import statistics\n\nstatistics.mean([])\n',
 "copytree_exists": 'import os, shutil, tempfile\n\nd = tempfile.mkdtemp()\nos.makedirs(os.path.join(d, "src"))\nos.makedirs(os.path.join(d, "dst"))\nos.chdir(d)\nshutil.copytree("src", "dst")\n',
 "template_key": 'from string import Template\n\nTemplate("Hello $who").substitute({})\n',
 "b64_padding": 'import base64\n\nbase64.b64decode("abc")\n',
 "uuid_bad": 'import uuid\n\nuuid.UUID("not-a-uuid")\n',
 "zip_bad": 'import zipfile\n\nopen("notes.txt", "w").write("hello")\nzipfile.ZipFile("notes.txt")\n',
 "tar_bad": 'import tarfile\n\nopen("notes.txt", "w").write("hello")\ntarfile.open("notes.txt")\n',
 "logging_basic": 'import logging\n\nlogging.basicConfig(level=logging.INFO, fmt="%(message)s")\n',
 "dataclass_mutable": 'from dataclasses import dataclass\n\n@dataclass\nclass Cart:\n    items: list = []\n',
 "dataclass_order": 'from dataclasses import dataclass\n\n@dataclass\nclass Point:\n    x: int = 0\n    y: int\n',
 "enum_value": 'from enum import Enum\n\nclass Color(Enum):\n    RED = "red"\n\nColor("purple")\n',
 "namedtuple_dup": 'from collections import namedtuple\n\nnamedtuple("Pair", "x x")\n',
 "relative_to": 'from pathlib import Path\n\nPath("/srv/app/data").relative_to("/home/me")\n',
 "dictwriter": 'import csv, io\n\nw = csv.DictWriter(io.StringIO(), fieldnames=["name"])\nw.writerow({"name": "a", "age": 3})\n',
 "wrap_width": 'import textwrap\n\ntextwrap.wrap("some text", width=0)\n',
 "signature_int": 'import inspect\n\ninspect.signature(42)\n',
 "import_module": 'import importlib\n\nimportlib.import_module("reportlab_plugins")\n',
 "asyncio_nested": 'import asyncio\n\nasync def inner():\n    return 1\n\nasync def main():\n    asyncio.run(inner())\n\nasyncio.run(main())\n',
 "asyncio_wait_for": 'import asyncio\n\nasync def main():\n    await asyncio.wait_for(asyncio.sleep(1), timeout=0.01)\n\nasyncio.run(main())\n',
 "connect_refused": 'import socket\n\nsocket.create_connection(("127.0.0.1", 9))\n',
 "thread_twice": 'import threading\n\nt = threading.Thread(target=print)\nt.start()\nt.start()\n',
 "queue_empty": 'import queue\n\nq = queue.Queue()\nq.get(timeout=0.01)\n',
 "urlopen_type": 'from urllib.request import urlopen\n\nurlopen("localhost:8080/status")\n',
 "shlex_quote": 'import shlex\n\nshlex.split(\'echo "unterminated\')\n',
 "etree_parse": 'import xml.etree.ElementTree as ET\n\nET.fromstring("<config><item></config>")\n',
 "deepcopy_lock": 'import copy, threading\n\nclass Job:\n    def __init__(self):\n        self.lock = threading.Lock()\n\ncopy.deepcopy(Job())\n',
 "heap_index": 'import heapq\n\nheapq.heappop([])\n',
 "json_expecting_value": 'import json\n\njson.loads("")\n',
 "int_enum_flag": 'import gzip\n\nopen("data.gz", "wb").write(b"not gzip at all")\ngzip.open("data.gz").read()\n',
 "email_header": 'from email.headerregistry import Address\n\nAddress(display_name="A", addr_spec="a@b@c")\n',
 "pickle_local": 'import pickle\n\ndef f():\n    def g():\n        pass\n    return pickle.dumps(g)\n\nf()\n',
 "calendar_month": 'import calendar\n\ncalendar.monthrange(2024, 13)\n',
 "random_sample": 'import random\n\nrandom.sample(range(3), 5)\n',
 "decimal_quantize": 'import _pydecimal as decimal\n\ndecimal.Decimal("1e30").quantize(decimal.Decimal("0.01"), context=decimal.Context(prec=10))\n',
 "argparse_choice": 'import argparse\n\np = argparse.ArgumentParser(prog="deploy")\np.add_argument("--env", choices=["dev", "prod"])\np.parse_args(["--env", "staging"])\n',
 "argparse_required": 'import argparse\n\np = argparse.ArgumentParser(prog="deploy")\np.add_argument("target")\np.parse_args([])\n',
 "http_status": 'import http.client\n\nhttp.client.HTTPConnection("localhost", 99999)\n',
 "timedelta_type": 'import datetime\n\ndatetime.timedelta(days="3")\n',
 "weakref_dead": 'import weakref\n\nclass A: pass\nweakref.finalize(1, print)\n',
 "zoneinfo_missing": 'import zoneinfo\n\nzoneinfo.ZoneInfo("Mars/Olympus")\n',
 "tomllib_bad": 'import tomllib\n\ntomllib.loads("a = ")\n',
 "struct_err": 'import sqlite3\n\ncon = sqlite3.connect(":memory:")\ncon.execute("select * from missing")\n',
 "plistlib_bad": 'import plistlib\n\nplistlib.loads(b"hello")\n',
 "secrets_bad": 'import statistics\n\nstatistics.stdev([1])\n',
 "ftplib": 'import smtplib\n\nsmtplib.SMTP().sendmail("a@b", ["c@d"], "hi")\n',
}


def run(name):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "app.py"), "w") as f:
            f.write(snips[name])
        r = subprocess.run([sys.executable, "app.py"], cwd=d, capture_output=True, text=True, timeout=20)
        return r.stderr.replace(d, "/home/dev/project")


def frames_split(name):
    lines = d[name].rstrip("\n").split("\n")
    starts = [i for i, l in enumerate(lines) if l.startswith('  File ')]
    j = starts[-1] + 1
    while j < len(lines) and lines[j].startswith(' '):
        j += 1
    return lines, starts, j

def fmt(name, form):
    if form == "A":
        return d[name].rstrip("\n")
    lines, starts, j = frames_split(name)
    exc = "\n".join(lines[j:])
    if form == "B":
        return exc
    # C: only the user's own frames (library frames cut, as "just my code" logs show them)
    out = []
    for k, s in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else j
        if "/home/dev/project/" in lines[s]:
            out.extend(lines[s:end])
    return "\n".join(out + [exc])



if __name__ == "__main__":
    name, form = sys.argv[1], sys.argv[2]
    d = {name: run(name)}
    print(fmt(name, form) if d[name].startswith("Traceback") else d[name], end="")
