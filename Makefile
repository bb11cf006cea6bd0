# leap: `make run` (set up, build, run the main job) and `make test` (set up, build, all tests).
BUILD ?= build
JOBS ?= $(shell nproc)
CONFIG ?= configs/quickstart.toml
LEAP = $(BUILD)/leap

.PHONY: all deps test-deps configure build run warm-start test test-fast bench bench-pipeline clean

all: build

deps:
	@bash scripts/install-deps.sh

# Test-only: the Python environment .venv with the pinned references (tests/python/requirements.lock).
test-deps:
	@bash scripts/install-test-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The quickstart: SFT warm start (when RUN_DIR has none), then LEAP RL steps. A second
# `make run` continues the same run (--resume) up to train.steps.
RUN_DIR ?= runs/quickstart
run: build
	@if [ -f $(RUN_DIR)/checkpoint/trainer_state.json ]; then \
	  $(LEAP) --config $(CONFIG) train --out $(RUN_DIR) --resume; \
	else \
	  $(LEAP) --config $(CONFIG) train --out $(RUN_DIR); \
	fi

# Rebuilds assets/warm_start, the warm start `make run` starts from, from scratch: the stages of
# configs/warm-start/ in order (about 4 h on 2 cores; a rerun resumes after the last stage
# made), then renews its pin in configs/quickstart.toml (docs/training.md).
warm-start: build
	@bash scripts/make-warm-start.sh

test: build test-deps
	cd $(BUILD) && ctest --output-on-failure -j 2

# The edit-compile-test loop: the unit tests only (no end-to-end, Python, GPU or slow labels).
test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j 2 -LE 'e2e|python|gpu|slow'

# Every benchmark once (the micro-benchmarks, bench_serve, the Python clients, the compile-bound
# and cluster scenarios of `leap bench`; 25 to 30 minutes on 2 cores), each writing the table the
# docs show to docs/bench/NAME.md, stamped with date, commit, machine, load and the exact command,
# then copied into the docs' marked blocks (docs/bench.md). BENCH=NAME... runs only those
# (`python3 scripts/bench_tables.py list` names them). The benchmark binaries get the OpenMP and
# OpenBLAS idle-wait settings that `leap` itself runs with (common/thread_pools_env.hpp).
BENCH ?=
bench: build
	python3 scripts/bench_tables.py --build $(BUILD) run $(BENCH)

# The pipeline throughput benchmark's compile-bound scenario alone (about 3 minutes).
bench-pipeline: build
	python3 scripts/bench_tables.py --build $(BUILD) run compile_bound

clean:
	rm -rf $(BUILD)
