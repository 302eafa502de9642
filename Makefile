# Preflight: two commands for a newcomer.
#   make run   install deps, build (release), simulate the default scenario
#   make test  install deps, build, run every test (unit, golden, Python, MPI search, unit under
#              ASan+UBSan, then every parser's fuzzer for 20 s)
# Other targets: build, python-test, install, bench, validate, asan, tsan-test, mpi-test, fuzz,
# format, clean.

JOBS ?= 2
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
MPI_BUILD ?= build-mpi
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1
FUZZERS = units scenario dataset simai chakra kernel_table kineto

.PHONY: all deps build run test unit golden python-test install asan-test asan tsan-test \
	mpi-test fuzz bench validate format clean

all: build

deps:
	@scripts/install-deps

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Only the CLI: the first prediction does not wait for the tests and benchmarks to build.
run: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target preflight
	$(BUILD)/preflight simulate

unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

golden: build
	tests/golden/run_golden.sh $(BUILD)/preflight

# The Python module (build/python/preflight*.so) under pytest, with the system python3.
python-test: build
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 -m pytest -q python/tests

# The Python module into the system python3's site-packages.
install: build
	cmake --install $(BUILD)

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPREFLIGHT_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS="-O1"

asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target preflight_tests preflight

asan-test: asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# The packet network's partitions on threads under ThreadSanitizer, every window threaded
# (not part of `make test`: about 7 min to build on 2 cores; run it after touching
# network/packet/).
$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPREFLIGHT_PYTHON=OFF \
	  -DPREFLIGHT_BUILD_BENCH=OFF \
	  -DCMAKE_CXX_FLAGS="-O1 -fsanitize=thread -DPREFLIGHT_PACKET_SERIAL_BELOW=0" \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread

tsan-test: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target preflight_tests
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_BUILD)/preflight_tests \
	  --gtest_filter='PacketPartitions.*:PacketBackend.Partition*:-*OverSeeds'

# `mpirun -np 2 preflight search` against the single-process search (an MPI build of the CLI).
$(MPI_BUILD)/build.ninja:
	cmake -S . -B $(MPI_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPREFLIGHT_MPI=ON \
	  -DPREFLIGHT_BUILD_BENCH=OFF

mpi-test: deps $(MPI_BUILD)/build.ninja
	cmake --build $(MPI_BUILD) -j $(JOBS) --target preflight
	tests/mpi/run_mpi_test.sh $(MPI_BUILD)/preflight

# Every parser's libFuzzer target (clang, ASan+UBSan) for FUZZ_SECONDS each on a copy of its seed
# corpus (docs/fuzzing.md).
$(FUZZ_BUILD)/build.ninja:
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DPREFLIGHT_FUZZ=ON \
	  -DPREFLIGHT_BUILD_BENCH=OFF -DPREFLIGHT_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo

fuzz: deps $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZERS:%=%_fuzz)
	FUZZ_SEED=$(FUZZ_SEED) scripts/run-fuzzers $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

test: build unit golden python-test mpi-test asan-test fuzz
	@echo "make test: all tests passed"

bench: build
	$(BUILD)/preflight_benchmarks

validate: build
	$(BUILD)/preflight validate --cv 5

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(MPI_BUILD) $(FUZZ_BUILD)
