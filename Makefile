PG_URL ?= postgres://postgres@127.0.0.1:5432/mangalord

.PHONY: install test test-sqlite test-hostile test-politeness lint demo bench

install:
	python -m pip install -r requirements-dev.txt

test:
	DATABASE_URL=$(PG_URL) python -m pytest

test-sqlite:
	env -u DATABASE_URL MANGALORD_DATA_DIR=$$(mktemp -d) python -m pytest -m sqlite_ok

# The outbound guard and bounded reads against a loopback canary and hostile sites (PostgreSQL, as production).
test-hostile:
	DATABASE_URL=$(PG_URL) python -m pytest crawler/tests/hostile fetch/tests

# Three worker processes against a rate-limiting site; prints the measured figures (bench/README.md).
test-politeness:
	DATABASE_URL=$(PG_URL) python -m pytest -s crawler/tests/workers/test_politeness_processes.py

lint:
	ruff check .
	ruff format --check .
	mypy
	lint-imports

demo:
	python manage.py demo

# The crawl benchmark also needs nginx and aria2c (Debian: apt-get install nginx-light aria2).
bench:
	python -m pip install -r bench/requirements.txt
	python bench/crawl.py
	python bench/crawl.py --sources 20 --rate 5
	python bench/queue_throughput.py
	python bench/wakeup_latency.py
	python bench/stream_memory.py
	python bench/status_fanout.py
	python bench/reconcile_scale.py
	python bench/api_latency.py
	python bench/library_latency.py
	python bench/big_site.py
	python bench/analysis_local.py
