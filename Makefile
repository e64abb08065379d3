# Kiln: the two set-up commands are `make demo` and `make test` (see README.md).
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@bash scripts/configure.sh $(BUILD) $(CMAKE_FLAGS)

build: configure
	@cmake --build $(BUILD)

test: build
	@bash scripts/test.sh $(BUILD)

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: build
	@$(BUILD)/bin/kiln-bench

clean:
	rm -rf $(BUILD)
