# Sourced by the scripts: put the virtual environment scripts/bootstrap.sh made first on PATH
# ($NIMO_VENV, default .venv in the repository), so `nimo`, `python3`, ruff, mypy and pytest
# are the environment's. Without one, the scripts use what is on PATH.
NIMO_VENV=${NIMO_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv}
if [[ -x "$NIMO_VENV/bin/python" ]]; then
  export VIRTUAL_ENV="$NIMO_VENV"
  export PATH="$NIMO_VENV/bin:$PATH"
else
  echo "${0##*/}: no virtual environment in $NIMO_VENV (run scripts/bootstrap.sh); using PATH" >&2
fi
