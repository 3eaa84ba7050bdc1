# Recipes for the README's commands and the checks CI runs (`just --list`).

venv := ".venv"

# Install svc with its test tools into .venv.
install:
    python3 -m venv {{venv}}
    {{venv}}/bin/pip install -q -e '.[test]'

# Serve the demo schema from an embedded PostgreSQL on :4000 (dev mode).
demo: install
    {{venv}}/bin/svc demo

# Run the tests against a real PostgreSQL (see README).
test *args: install
    {{venv}}/bin/pytest {{args}}

# Lint: ruff (rules and format), the layer contract of ARCHITECTURE.md, and pyright (the types).
lint: install
    {{venv}}/bin/ruff check .
    {{venv}}/bin/ruff format --check .
    {{venv}}/bin/lint-imports
    PYRIGHT_PYTHON_IGNORE_WARNINGS=1 {{venv}}/bin/pyright

# Benchmark against PostGraphile and raw SQL on pagila (bench/run.py; e.g. `just bench --quick --ops Q1,Q2`).
bench *args: install
    {{venv}}/bin/python bench/run.py {{args}}

# Benchmark change events: delivered events per second and capture-to-delivery latency (bench/events.py).
bench-events *args: install
    {{venv}}/bin/python bench/events.py {{args}}

# Benchmark subscriptions: the poller's round duration and cost for 1000 and 10000 live queries (bench/subscriptions.py).
bench-subscriptions *args: install
    {{venv}}/bin/python bench/subscriptions.py {{args}}

# Benchmark export and import: rows per second of POST /export and /import against COPY (bench/bulk.py).
bench-bulk *args: install
    {{venv}}/bin/python bench/bulk.py {{args}}

# The scale-out drill: three instances, one standby, a kill and a standby restart; nothing acknowledged lost (bench/drill.py).
bench-drill *args: install
    {{venv}}/bin/python bench/drill.py {{args}}

# What CI runs on a clean clone.
ci:
    bash .ci/run
