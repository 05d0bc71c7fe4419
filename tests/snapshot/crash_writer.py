"""Child process for the kill -9 test: writes one large snapshot, reporting progress.

    python crash_writer.py STORE_DIR SERVICES

Prints ``begin <snapshot_id>``, then ``append <table>`` before each table (flushed), then
``committed`` at the end. The parent kills it with SIGKILL somewhere in between.
"""

from __future__ import annotations

import sys

from perf_write_10k import synthetic_rows

from toolkit.snapshot import Store


def main() -> None:
    root, services = sys.argv[1], int(sys.argv[2])
    tables = synthetic_rows(services)
    store = Store.open(root)

    def progress(table: str) -> None:
        print(f"append {table}", flush=True)

    writer = store.begin(fault_hook=progress)
    print(f"begin {writer.snapshot_id}", flush=True)
    for name, rows in tables.items():
        writer.write(name, rows)
    writer.commit()
    print("committed", flush=True)


if __name__ == "__main__":
    main()
