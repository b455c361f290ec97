#!/usr/bin/env bash
# Install memlane as a per-user service; safe to re-run. --uninstall removes the service and keeps the data.
#
#   scripts/install.sh                      venv + install + database + token + service + client config
#   scripts/install.sh --python PATH        use an existing environment that has the dependencies (no venv, no pip)
#   scripts/install.sh --print-service systemd|launchd    print the rendered unit/plist and exit
#   scripts/install.sh --uninstall          remove the service; data in LIVE_ROOT stays
#
# LIVE_ROOT (default ~/.memlane) holds memory.db, auth_token and logs/. MEMLANE_PORT sets the port.
# SERVICE_MANAGER=systemd|launchd|none overrides the detection (not MEMLANE_*: the daemon rejects unknown keys).
# Every message comes from i18n_messages.py (scripts/say.py), in English or 中文 (MEMLANE_LANG / LANG).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIVE_ROOT="${LIVE_ROOT:-$HOME/.memlane}"
VENV="${VENV:-$ROOT/.venv}"
SYS_PYTHON="${PYTHON:-python3}"
HOST=127.0.0.1
PORT="${MEMLANE_PORT:-8086}"
UNIT_NAME=memlane.service
LABEL=ai.memlane.mcp
HEALTH_UNIT=memlane-health
HEALTH_LABEL=ai.memlane.health
SYSTEMD_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
LAUNCHD_DIR="$HOME/Library/LaunchAgents"

mode=install
PY=""
print_kind=""
while [ $# -gt 0 ]; do
    case "$1" in
        --uninstall) mode=uninstall ;;
        --python) PY="${2:?}"; shift ;;
        --print-service) mode=print; print_kind="${2:?}"; shift ;;
        -h|--help) mode=help ;;
        *) mode=help ;;
    esac
    shift
done

command -v "$SYS_PYTHON" >/dev/null 2>&1 || { echo "$SYS_PYTHON not found; install Python 3.10+ / 未找到 $SYS_PYTHON，请安装 Python 3.10+" >&2; exit 1; }
say() { "$SYS_PYTHON" "$ROOT/scripts/say.py" "$@"; }

if [ "$mode" = help ]; then say install.usage; exit 0; fi

# Which service manager runs here: systemd (a user session bus), launchd (macOS), or none.
service_manager() {
    if [ -n "${SERVICE_MANAGER:-}" ]; then echo "$SERVICE_MANAGER"; return; fi
    if [ "$(uname -s)" = Darwin ] && command -v launchctl >/dev/null 2>&1; then echo launchd; return; fi
    if command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1; then
        echo systemd; return
    fi
    echo none
}

# render TEMPLATE: the template with @ROOT@ @PYTHON@ @LIVE_ROOT@ @HOST@ @PORT@ filled in (XML-escaped for plists).
render() {
    "$SYS_PYTHON" - "$1" "$ROOT" "${PY:-$VENV/bin/python}" "$LIVE_ROOT" "$HOST" "$PORT" <<'PYEOF'
import sys
from xml.sax.saxutils import escape
template, root, python, live, host, port = sys.argv[1:]
text = open(template, encoding="utf-8").read()
quote = escape if template.endswith(".plist") else (lambda s: s)
for key, value in {"ROOT": root, "PYTHON": python, "LIVE_ROOT": live, "HOST": host, "PORT": port}.items():
    text = text.replace("@" + key + "@", quote(value))
sys.stdout.write(text)
PYEOF
}

if [ "$mode" = print ]; then
    case "$print_kind" in
        systemd) render "$ROOT/scripts/service/memlane.service" ;;
        launchd) render "$ROOT/scripts/service/$LABEL.plist" ;;
        *) say install.usage; exit 2 ;;
    esac
    exit 0
fi

stop_service() {
    case "$(service_manager)" in
        systemd) systemctl --user stop "$UNIT_NAME" >/dev/null 2>&1 || true ;;
        launchd) launchctl bootout "gui/$(id -u)/$LABEL" >/dev/null 2>&1 || true ;;
    esac
}

# Prints what a running daemon holds (the database file or its URL) and succeeds, or fails when none runs.
# The service just stopped may take a moment to let go of the database, so a held lock is retried briefly.
daemon_running() {
    local wait=0
    [ "$(service_manager)" = none ] || wait=10
    "$PY" - "$LIVE_ROOT/memory.db" "$HOST" "$PORT" "$wait" <<'PYEOF'
import json
import sys
import time
import urllib.request

from filelock import FileLock, Timeout

db, host, port, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
deadline = time.monotonic() + wait
while True:
    try:
        FileLock(db + ".lock").acquire(timeout=0).lock.release()
        break
    except Timeout:
        if time.monotonic() >= deadline:
            print(db)
            sys.exit(0)
        time.sleep(0.5)
if port:
    url = f"http://{host}:{port}"
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as resp:
            if "status" in json.load(resp):
                print(url)
                sys.exit(0)
    except (OSError, ValueError):
        pass
sys.exit(1)
PYEOF
}

if [ "$mode" = uninstall ]; then
    removed=0
    case "$(service_manager)" in
        systemd)
            systemctl --user disable --now "$UNIT_NAME" "$HEALTH_UNIT.timer" >/dev/null 2>&1 || true
            for f in "$SYSTEMD_DIR/$UNIT_NAME" "$SYSTEMD_DIR/$HEALTH_UNIT.service" "$SYSTEMD_DIR/$HEALTH_UNIT.timer"; do
                if [ -f "$f" ]; then rm -f "$f"; removed=1; fi
            done
            systemctl --user daemon-reload >/dev/null 2>&1 || true ;;
        launchd)
            for label in "$LABEL" "$HEALTH_LABEL"; do
                launchctl bootout "gui/$(id -u)/$label" >/dev/null 2>&1 || true
                if [ -f "$LAUNCHD_DIR/$label.plist" ]; then rm -f "$LAUNCHD_DIR/$label.plist"; removed=1; fi
            done ;;
        *)
            for f in "$SYSTEMD_DIR/$UNIT_NAME" "$LAUNCHD_DIR/$LABEL.plist" "$SYSTEMD_DIR/$HEALTH_UNIT.service" \
                     "$SYSTEMD_DIR/$HEALTH_UNIT.timer" "$LAUNCHD_DIR/$HEALTH_LABEL.plist"; do
                if [ -f "$f" ]; then rm -f "$f"; removed=1; fi
            done ;;
    esac
    if [ "$removed" = 1 ]; then
        say install.uninstalled path="$LIVE_ROOT"
    else
        say install.nothing_to_uninstall path="$LIVE_ROOT"
    fi
    exit 0
fi

# 1. The Python environment.
if [ -n "$PY" ]; then
    command -v "$PY" >/dev/null 2>&1 || { say install.no_python python="$PY" >&2; exit 1; }
    PY="$(command -v "$PY")"
    say install.venv path="$PY"
else
    if [ ! -x "$VENV/bin/python" ]; then "$SYS_PYTHON" -m venv "$VENV"; fi
    PY="$VENV/bin/python"
    say install.venv path="$VENV"
    say install.pip path="$VENV"
    "$PY" -m pip install --quiet --upgrade pip
    "$PY" -m pip install --quiet "$ROOT"
fi

# 2. The data directory and database (the running service is stopped first: it holds the database lock).
mkdir -p "$LIVE_ROOT/logs"
chmod 700 "$LIVE_ROOT"
say install.live_root path="$LIVE_ROOT"
stop_service
# A daemon this script did not start (make run, ./memlane serve) holds the database or answers on the
# port: say so, rather than fail in `memlane init` or install a service that cannot start.
if held="$(daemon_running)"; then
    say install.daemon_running what="$held" >&2
    exit 1
fi
"$PY" "$ROOT/scripts/init_db.py" --db "$LIVE_ROOT/memory.db"

# 3. The token file, created once and never overwritten.
# The same command as `make run` (commands/token.py): mode 0600, and it says how to read the token.
TOKEN_FILE="$LIVE_ROOT/auth_token"
"$PY" "$ROOT/cli.py" token --token-file "$TOKEN_FILE"

# 4. The service.
FOREGROUND="MEMLANE_TOKEN_FILE=\"$TOKEN_FILE\" \"$PY\" \"$ROOT/mcp_server.py\" --host $HOST --port $PORT --db \"$LIVE_ROOT/memory.db\""
LOG="$LIVE_ROOT/logs/memlane.log"
running=0
case "$(service_manager)" in
    systemd)
        mkdir -p "$SYSTEMD_DIR"
        render "$ROOT/scripts/service/memlane.service" > "$SYSTEMD_DIR/$UNIT_NAME"
        if systemctl --user daemon-reload && systemctl --user enable "$UNIT_NAME" >/dev/null 2>&1 \
            && systemctl --user restart "$UNIT_NAME"; then
            say install.service_systemd unit="$SYSTEMD_DIR/$UNIT_NAME" log="$LOG"
            running=1
        else
            say install.service_failed detail="systemctl --user" cmd="$FOREGROUND"
        fi
        # The daily health check: a timer that appends to logs/health.log.
        render "$ROOT/scripts/service/$HEALTH_UNIT.service" > "$SYSTEMD_DIR/$HEALTH_UNIT.service"
        render "$ROOT/scripts/service/$HEALTH_UNIT.timer" > "$SYSTEMD_DIR/$HEALTH_UNIT.timer"
        if systemctl --user daemon-reload && systemctl --user enable --now "$HEALTH_UNIT.timer" >/dev/null 2>&1; then
            say install.health_timer what="$SYSTEMD_DIR/$HEALTH_UNIT.timer" log="$LIVE_ROOT/logs/health.log"
        else
            say install.service_failed detail="systemctl --user enable $HEALTH_UNIT.timer" cmd="$PY $ROOT/scripts/health_check.py"
        fi ;;
    launchd)
        mkdir -p "$LAUNCHD_DIR"
        render "$ROOT/scripts/service/$LABEL.plist" > "$LAUNCHD_DIR/$LABEL.plist"
        launchctl bootout "gui/$(id -u)/$LABEL" >/dev/null 2>&1 || true
        if launchctl bootstrap "gui/$(id -u)" "$LAUNCHD_DIR/$LABEL.plist" 2>/dev/null \
            || launchctl load -w "$LAUNCHD_DIR/$LABEL.plist" 2>/dev/null; then
            say install.service_launchd plist="$LAUNCHD_DIR/$LABEL.plist" log="$LOG"
            running=1
        else
            say install.service_failed detail="launchctl" cmd="$FOREGROUND"
        fi
        render "$ROOT/scripts/service/memlane-health.plist" > "$LAUNCHD_DIR/$HEALTH_LABEL.plist"
        launchctl bootout "gui/$(id -u)/$HEALTH_LABEL" >/dev/null 2>&1 || true
        if launchctl bootstrap "gui/$(id -u)" "$LAUNCHD_DIR/$HEALTH_LABEL.plist" 2>/dev/null \
            || launchctl load -w "$LAUNCHD_DIR/$HEALTH_LABEL.plist" 2>/dev/null; then
            say install.health_timer what="$LAUNCHD_DIR/$HEALTH_LABEL.plist" log="$LIVE_ROOT/logs/health.log"
        else
            say install.service_failed detail="launchctl $HEALTH_LABEL" cmd="$PY $ROOT/scripts/health_check.py"
        fi ;;
    *)
        say install.no_service ;;
esac

# 5. What to paste into a client: the README's snippets, from their one source (commands/clients.py).
URL="http://$HOST:$PORT"
echo
"$PY" "$ROOT/cli.py" clients --url "$URL" --token-file "$TOKEN_FILE"
echo
if [ "$running" = 1 ]; then
    say install.done url="$URL" root="$ROOT"
else
    say install.done_not_running cmd="$FOREGROUND"
fi
