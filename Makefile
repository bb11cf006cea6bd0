# leap: `make run` (set up, build, run the main job) and `make test` (set up, build, all tests).
BUILD ?= build
JOBS ?= $(shell nproc)
CONFIG ?= configs/quickstart.toml
LEAP = $(BUILD)/leap

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Until the training pipeline exists: verify the task suite, then a short `leap check` demo.
run: build
	$(LEAP) --config $(CONFIG) tasks list
	$(LEAP) --config $(CONFIG) tasks verify
	$(LEAP) --config $(CONFIG) check --task vector_add --source tests/env/candidates/vector_add/float4_gridstride.cu
	$(LEAP) --config $(CONFIG) check --task vector_add --source tests/env/candidates/vector_add/wrong_answer.cu

test: build
	cd $(BUILD) && ctest --output-on-failure -j 2

bench: build
	@for b in $(BUILD)/bench/bench_*; do [ -x "$$b" ] && "$$b"; done

clean:
	rm -rf $(BUILD)
