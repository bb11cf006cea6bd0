"""Fixtures shared by leap's Python tests: where the built leap binary and the source tree are.

CTest sets LEAP_BINARY, LEAP_SOURCE_DIR and LEAP_BUILD_DIR (tests/python/pytest_discover.cmake.in);
run by hand, the defaults are the repository's build/ folder.
"""
import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("LEAP_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BUILD_DIR = pathlib.Path(os.environ.get("LEAP_BUILD_DIR", SOURCE_DIR / "build"))


@pytest.fixture(scope="session")
def leap_binary() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("LEAP_BINARY", BUILD_DIR / "leap"))
    if not path.is_file():
        pytest.fail(f"{path} is missing: build leap first (make build), or set LEAP_BINARY")
    return path


@pytest.fixture(scope="session")
def source_dir() -> pathlib.Path:
    return SOURCE_DIR
