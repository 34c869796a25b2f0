# The README's two commands. Everything else is CMake's.
#   make run    install what is missing, build, run mtdesk with the bundled model
#   make test   install what is missing, build, run the test suite
# Variables: BUILD_DIR, BUILD_TYPE, JOBS, CUDA_ARCHITECTURES (e.g. 90; default: all release
# architectures), CMAKE_ARGS.

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CUDA_ARCHITECTURES ?=
CMAKE_ARGS ?=

NVCC := $(shell command -v nvcc 2>/dev/null || (test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc))
CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
ifneq ($(NVCC),)
CMAKE_FLAGS += -DCMAKE_CUDA_COMPILER=$(NVCC)
endif
ifneq ($(CUDA_ARCHITECTURES),)
CMAKE_FLAGS += -DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHITECTURES)
endif

# The bundled demo model (resources/models/mtdesk-demo); MODEL=DIR runs another one.
MODEL ?= resources/models/mtdesk-demo
SAMPLE ?= Open the file and save your changes.

.PHONY: all deps configure build run test clean

all: build

deps:
	@bash tools/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@if [ -n "$$DISPLAY" ] || [ -n "$$WAYLAND_DISPLAY" ]; then \
		echo "mtdesk: opening the window with $(MODEL)"; \
		$(BUILD_DIR)/app/mtdesk gui --model "$(MODEL)"; \
	else \
		echo "mtdesk: no display (\$$DISPLAY and \$$WAYLAND_DISPLAY are unset), so no window;"; \
		echo "        translating a sample on the command line with $(MODEL) instead:"; \
		echo; \
		for lang in zh de fr ru ko; do \
			printf '%s -> %s: ' "$(SAMPLE)" $$lang; \
			echo "$(SAMPLE)" | $(BUILD_DIR)/app/mtdesk translate --model "$(MODEL)" --to $$lang || exit 1; \
		done; \
		echo; \
		$(BUILD_DIR)/app/mtdesk models inspect "$(MODEL)"; \
	fi

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
