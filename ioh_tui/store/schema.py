"""The store's DDL and its migrations: in `ioh_tui/dbfile/schema.py`, beside the file checks.

There so checking a store file before the app starts loads no part of this package (issue 23).
"""

from ioh_tui.dbfile.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]
