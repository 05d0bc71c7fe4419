#!/usr/bin/env bash
# Install Debian's Chromium for the report's browser test; the test set-up calls this.
# Exit 0 when /usr/bin/chromium is there (already, or installed now); non-zero when it
# cannot be installed here (not root, no apt-get, no package), and the browser test skips.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install_chromium: not root; install the 'chromium' package to run the browser test" >&2
    exit 2
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_chromium: no apt-get here; install Chromium as $CHROMIUM by hand" >&2
    exit 3
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
if [ ! -x "$CHROMIUM" ]; then
    echo "install_chromium: apt-get installed chromium but $CHROMIUM is missing" >&2
    exit 4
fi
