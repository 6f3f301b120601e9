"""Puts ../src first on sys.path, so the tests run against the checkout
(or, with SLUICE_CLIENT_INSTALLED=1, against the installed package)."""
import os
import sys

if os.environ.get("SLUICE_CLIENT_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
