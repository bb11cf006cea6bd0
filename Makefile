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

# Rebuilds assets/warm_start, the warm start `make run` starts from, from scratch with
# the [policy] and [sft] of configs/quickstart.toml, and renews its pin there (docs/training.md).
warm-start: build
	@bash scripts/make-warm-start.sh

test: build test-deps
	cd $(BUILD) && ctest --output-on-failure -j 2

# The edit-compile-test loop: the unit tests only (no end-to-end, Python, GPU or slow labels).
test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j 2 -LE 'e2e|python|gpu|slow'

# Micro-benchmarks (Google Benchmark), then the pipeline throughput benchmark's compile-bound
# scenario (async vs sync vs DCP off; about 3 minutes). The benchmark binaries get the OpenMP and
# OpenBLAS idle-wait settings that `leap` itself runs with (common/thread_pools_env.hpp).
bench: build
	@for b in $(BUILD)/bench/bench_*; do [ -x "$$b" ] && OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-PASSIVE} \
	  OPENBLAS_THREAD_TIMEOUT=$${OPENBLAS_THREAD_TIMEOUT:-4} "$$b"; done
	$(LEAP) bench --config configs/bench/compile_bound.toml

bench-pipeline: build
	$(LEAP) bench --config configs/bench/compile_bound.toml

clean:
	rm -rf $(BUILD)
