"""Definitions of a Python file as Python's own `ast` sees them.

Usage: python3 ast_symbols.py FILE QUALNAME...
Prints one JSON object per line for each QUALNAME (dotted names of the
enclosing classes and functions, e.g. `Counter.fromkeys`), the first
definition of that name in document order:
  kind        "class", "method" (a def whose nearest enclosing definition is a
              class) or "function"
  first_line  the line of the `def`/`class` keyword (`lineno`; decorators are
              above it)
  last_line   `end_lineno`
  doc         the docstring literal's source text without its prefix and
              quotes, stripped (None without a docstring)
  decorated, is_async, nested_class, nested_in_function: the shape, so a
              caller can check its cases cover them
A QUALNAME the file lacks prints {"missing": QUALNAME}.
"""

import ast
import json
import sys


def literal_doc(source, node):
    body = node.body
    if not body or not isinstance(body[0], ast.Expr):
        return None
    value = body[0].value
    if not (isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes))):
        return None
    text = ast.get_source_segment(source, value)
    if text is None:
        return None
    text = text.lstrip("rRuUbB")
    quote = 3 if text.startswith(('"""', "'''")) else 1
    return text[quote : len(text) - quote].strip()


def walk(node, parents, found):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            qualname = ".".join([p.name for p in parents] + [child.name])
            if qualname not in found:
                enclosing = parents[-1] if parents else None
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                elif isinstance(enclosing, ast.ClassDef):
                    kind = "method"
                else:
                    kind = "function"
                found[qualname] = {
                    "qualname": qualname,
                    "kind": kind,
                    "first_line": child.lineno,
                    "last_line": child.end_lineno,
                    "doc": literal_doc(SOURCE, child),
                    "decorated": bool(child.decorator_list),
                    "is_async": isinstance(child, ast.AsyncFunctionDef),
                    "nested_class": kind == "class" and isinstance(enclosing, ast.ClassDef),
                    "nested_in_function": isinstance(enclosing, (ast.FunctionDef, ast.AsyncFunctionDef)),
                }
            walk(child, parents + [child], found)
        else:
            walk(child, parents, found)


path = sys.argv[1]
with open(path, encoding="utf-8") as f:
    SOURCE = f.read()
found = {}
walk(ast.parse(SOURCE, filename=path), [], found)
for name in sys.argv[2:]:
    print(json.dumps(found.get(name, {"missing": name})))
