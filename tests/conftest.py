"""Every test runs with its own cache home: a full audit keeps statuses in the user's cache
folder by default (``[audit] status_cache``), and tests must not write to the real one."""

from __future__ import annotations

import os
import tempfile

os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="platform-audit-tests-cache-")
