"""Shared by the tests: where the twoscale executable is (skip when it is absent)."""

import os
import shutil
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")
STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stubs")


def binary():
    """Absolute path of $TWOSCALE_BIN (relative paths from the current folder), else twoscale on PATH."""
    env = os.environ.get("TWOSCALE_BIN")
    if env:
        path = os.path.abspath(env) if os.sep in env else shutil.which(env)
        return path if path and os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which("twoscale")


def skip_reason():
    env = os.environ.get("TWOSCALE_BIN")
    if env:
        return "TWOSCALE_BIN=%s is not an executable file (build it: swift build)" % env
    return "no twoscale executable: set TWOSCALE_BIN (e.g. .build/debug/twoscale) or put twoscale on PATH"


def requires_binary(cls):
    return unittest.skipIf(binary() is None, skip_reason())(cls)
