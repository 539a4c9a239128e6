"""Signed download links: ?file=...&expires=...&sig=<base64 HMAC>."""
import base64
import hashlib
import hmac

from .query import first, parse_query


def sign(secret, file, expires):
    mac = hmac.new(secret, f"{file}:{expires}".encode(), hashlib.sha256).digest()
    return base64.b64encode(mac[:16]).decode()


def verify(secret, query_string, now):
    params = parse_query(query_string)
    file, expires, sig = first(params, "file"), first(params, "expires"), first(params, "sig")
    if not (file and expires and sig):
        return False
    if int(expires) < now:
        return False
    return hmac.compare_digest(sign(secret, file, expires), sig)
