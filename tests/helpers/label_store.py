"""Label stores for the tests: a throwaway PostgreSQL server, an empty store on each backend (SQLite, PostgreSQL), a project with items."""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from core.labeling import items
from core.labeling.store import (
    LabelStore,
)

N_RATERS, N_SUBMITS, N_ITEMS, TARGET = 10, 100, 300, 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(shlex.quote(c) for c in cmd)]


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL server for this test session; yields ``(host, port)``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
    bindir = Path(found[-1]).parent
    base = Path(tempfile.mkdtemp(prefix="wbpg-", dir="/tmp"))  # short path: unix socket names are limited
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    data, port = base / "data", _free_port()
    subprocess.run(_as_postgres([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                 "-E", "UTF8", "--no-sync"]), check=True, capture_output=True)
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "log"),
                                 "-w", "start"]), check=True, capture_output=True)
    try:
        yield "127.0.0.1", port
    finally:
        subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _new_postgres_db(server: tuple[str, int]) -> str:
    import psycopg

    host, port = server
    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(host=host, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql+psycopg://postgres@{host}:{port}/{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.xdist_group("labeling_pg"))])
def store_url(request, tmp_path) -> str:
    """The URL of an empty label store on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'labels.sqlite'}"
    return _new_postgres_db(request.getfixturevalue("postgres_server"))


@pytest.fixture()
def store(store_url):
    s = LabelStore(store_url)
    s.ensure_schema()
    yield s
    s.dispose()


def _project_with_items(store: LabelStore, n: int = N_ITEMS, **settings) -> items.Project:
    project = items.create_project(store, "p", target_raters=TARGET, reservation_seconds=600, **settings)
    items.add_items(store, project, [
        {"dataset": "d", "identifier": f"i{i:04d}", "prompt_body": f"prompt {i}", "response_text": f"answer {i}",
         "metadata": {}} for i in range(n)])
    return project
