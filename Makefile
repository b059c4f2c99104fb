# Heron's two commands on a fresh Debian 12 machine (as root):
#   make run    install what is missing, build, run the examples
#   make test   install what is missing, build, run every test
# Other targets: build, bench, clean. BUILD=dir and JOBS=n override defaults.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test bench fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

build: configure
	@ninja -C $(BUILD) -j$(JOBS)

run: build
	@bash scripts/run-examples.sh $(BUILD)/bin/heron

test: build
	@cd $(BUILD) && ctest -j$(JOBS) --output-on-failure --timeout 600

bench: deps
	@cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DHERON_TESTS=OFF >/dev/null
	@ninja -C build-release -j$(JOBS)
	@for b in build-release/bin/bench_*; do echo "== $$b"; $$b --benchmark_min_time=0.2; done

# make fuzz                              build the libFuzzer targets
# make fuzz TARGET=fuzz_diff SECONDS=600 run one of them
fuzz: deps
	@bash scripts/fuzz.sh $(TARGET) $(SECONDS)

clean:
	rm -rf $(BUILD) build-release build-fuzz
