# Heron's two commands on a fresh Debian 12 machine (as root):
#   make run    install what is missing, build, run the examples
#   make test   install what is missing, build, run every test
#   make test-aarch64  the same for AArch64: cross-build (g++-aarch64-linux-gnu,
#                      arm64 multiarch libraries) the heron command and the
#                      unit tests that run generated code, run them with the
#                      file tests under qemu-user
# Other targets: build, bench, clean. BUILD=dir and JOBS=n override defaults.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

XBUILD ?= build-aarch64

.PHONY: all deps configure build run test test-aarch64 bench fuzz clean

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

test-aarch64:
	@bash scripts/install-deps.sh --aarch64
	@cmake -S . -B $(XBUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/toolchain-aarch64.cmake -DHERON_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@ninja -C $(XBUILD) -j$(JOBS) heron heron_unit_tests
	@cd $(XBUILD) && ctest -j$(JOBS) --output-on-failure --timeout 1200

bench: deps
	@cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DHERON_TESTS=OFF >/dev/null
	@ninja -C build-release -j$(JOBS)
	@for b in build-release/bin/bench_*; do echo "== $$b"; $$b --benchmark_min_time=0.2; done

# make fuzz                              build the libFuzzer targets
# make fuzz TARGET=fuzz_diff SECONDS=600 run one of them
fuzz: deps
	@bash scripts/fuzz.sh $(TARGET) $(SECONDS)

clean:
	rm -rf $(BUILD) $(XBUILD) build-release build-fuzz
