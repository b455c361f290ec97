# Shared by the memlane git hooks (sourced, not run). Picks the Python that runs the hook logic:
# $HOOK_PYTHON, then the repository's .venv, then python3 on PATH.
memlane_python() {
    for candidate in "${HOOK_PYTHON:-}" "$1/.venv/bin/python" "$(command -v python3 2>/dev/null)"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
