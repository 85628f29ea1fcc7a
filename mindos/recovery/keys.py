"""Signing keys: which home made an artifact, and whether this home trusts it.

A seal's digest proves a file was not changed since it was sealed, but anyone can compute
one, so it cannot prove *who* sealed it: an edited and resealed snapshot passes.  Each home
therefore holds a secret key that signs the artifacts it writes (:func:`mindos.core.seal.
seal_bytes` with ``key``), and restores and imports ask :func:`keyring` whom they trust.

Design decisions
  * **One key per home**: ``<home>/seal.key``, 32 random bytes written as 64 hex characters,
    mode 0600.  ``init`` creates it, or the first artifact writer does (:func:`home_key`
    with ``create``); it is never the reason a home is created: no home directory, no key.
    The key is written to a temporary file and linked into place, so two first writers
    racing end with one key, never a half-written one.
  * **Trusted keys are files the operator copies**: ``<home>/trusted-keys/<name>.key`` holds
    another home's ``seal.key``; artifacts that home signed are then
    ``signed_by_trusted_key`` here.  HMAC keys are symmetric: whoever holds a copy can sign
    as that home, so a trusted key is shared only between homes of one operator.
  * **Key files are read like any untrusted file**: no symlink is followed, only a regular
    file of at most :data:`MAX_KEY_FILE` bytes holding exactly 64 hex characters is a key.
"""

import os

from mindos.core import seal
from mindos.errors import IntegrityError, MindosError, NotFound

KEY_FILE = "seal.key"
TRUSTED_DIR = "trusted-keys"
THIS_HOME = "signed_by_this_home"
TRUSTED = "signed_by_trusted_key"
UNSIGNED = "unsigned"
MAX_KEY_FILE = 4096
MAX_TRUSTED = 256  # key files read from trusted-keys/ (a bounded listing)


def key_path(home):
    """``<home>/seal.key``."""
    return os.path.join(home, KEY_FILE)


def trusted_dir(home):
    """``<home>/trusted-keys/``."""
    return os.path.join(home, TRUSTED_DIR)


def read_key(path):
    """The key a key file holds (bytes); IntegrityError when the file is not a plain,
    well-formed key file; FileNotFoundError when there is none."""
    from mindos.core import files  # lazy: only signed artifacts read keys

    try:  # no symlink, no FIFO or device, at most MAX_KEY_FILE bytes
        data = files.read_bytes(path, max_bytes=MAX_KEY_FILE, what=f"key file {path}")
    except NotFound:
        raise FileNotFoundError(path) from None
    except MindosError as exc:
        raise IntegrityError(f"cannot read key file {path}: {exc} (a key file must be a regular file,"
                             " not a symlink)") from None
    text = data.strip()
    if len(text) != 64 or text.strip(b"0123456789abcdefABCDEF"):
        raise IntegrityError(f"key file {path} does not hold a key (expected 64 hex characters)")
    return bytes.fromhex(text.decode("ascii"))


def home_key(home, *, create=False):
    """This home's signing key (bytes), or None when it has none (and ``create`` is false, or
    the home directory does not exist: a key never creates a home)."""
    path = key_path(home)
    try:
        return read_key(path)
    except FileNotFoundError:
        if not create or not os.path.isdir(home):
            return None
    key = os.urandom(32)
    from mindos.core import files  # lazy: only the first signed artifact writes the key

    try:  # linked into place whole (0600): a key another writer placed first is never replaced
        files.write_new(path, (key.hex() + "\n").encode("ascii"))
    except MindosError as exc:
        if exc.code != "exists":
            raise
        return read_key(path)  # another writer placed its key first: use that one
    return key


def trusted_keys(home):
    """``{key id: (TRUSTED, key)}`` from ``<home>/trusted-keys/*.key``.  A malformed key file
    raises IntegrityError naming it (an operator's mistake should not pass silently)."""
    directory = trusted_dir(home)
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".key"))[:MAX_TRUSTED]
    except OSError:
        return {}
    found = {}
    for name in names:
        try:
            key = read_key(os.path.join(directory, name))
        except FileNotFoundError:
            continue
        found[seal.key_id(key)] = (TRUSTED, key)
    return found


def keyring(home):
    """Every key this home checks signatures with: ``{key id: (label, key)}`` (its own key
    labelled :data:`THIS_HOME`, the trusted ones :data:`TRUSTED`)."""
    ring = trusted_keys(home) if home else {}
    own = home_key(home) if home else None
    if own is not None:
        ring[seal.key_id(own)] = (THIS_HOME, own)
    return ring
