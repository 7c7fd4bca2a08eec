#!/usr/bin/env bash
# Run the whole test suite: unit tests, store tests against a real PostgreSQL server, and the
# integration tests on a lab of network namespaces (built and removed by the tests' fixture;
# removed here too, whatever happens). Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."

cleanup() {
  nimo lab down --all >/dev/null 2>&1 || true
  bash scripts/start-postgres.sh --stop >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

if url=$(bash scripts/start-postgres.sh); then
  export NIMO_TEST_POSTGRES_URL="$url"
else
  echo "test.sh: PostgreSQL did not start; the postgres-marked tests will fail" >&2
fi

ruff check nimo workbench tests benchmarks || exit 1
mypy || exit 1
python3 -m pytest -q -p no:cacheprovider "$@"
