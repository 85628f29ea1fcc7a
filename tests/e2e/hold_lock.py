"""Hold a MindOS home's write lock, as a busy writer would, for the end-to-end tests.

    python3 tests/e2e/hold_lock.py HOME [SECONDS]

Takes the store's own writer lock (``mindos.store.db.write``: the home's lock file and a
``BEGIN IMMEDIATE`` transaction), prints ``locked`` on stdout once it holds it, and keeps it
until stdin closes or SECONDS (default 60) pass, whichever comes first; then rolls nothing
back (it wrote nothing) and exits 0.
"""

import os
import select
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from mindos.store import db  # noqa: E402


def main():
    home = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    conn = db.connect(home, create=False)
    with db.write(conn):
        print("locked", flush=True)
        select.select([sys.stdin], [], [], seconds)  # returns when stdin closes (the test is done) or at the limit
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
