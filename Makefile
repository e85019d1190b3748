# authkeyd: the commands a newcomer needs. Each installs its own Debian
# packages first (scripts/install-deps), so they work on a fresh machine.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
BUILD_LOG := .build/build.log

.PHONY: all deps build demo test bench clean

all: build

deps:
	@scripts/install-deps

# Debug build of every product; fails on any compiler warning.
build: deps
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@! grep -E "warning:" $(BUILD_LOG) | grep -v "^warning: 'main'" || { echo "error: the build has warnings"; exit 1; }

# The main job: authkeyd serving virtual security keys, and authctl walking
# through them.
demo: build
	scripts/demo

# Every test: unit, protocol conformance, libfido2 end to end, fido2-tools,
# and a relying-party library (py_webauthn) verifying the daemon's results.
test: build
	scripts/rp-venv
	$(SWIFT) test --skip-build --skip EndToEndTests
	$(SWIFT) test --skip-build --filter EndToEndTests --no-parallel

# Figures for BENCHMARKS.md (release build, pinned to one core).
bench: deps
	$(SWIFT) build -c release --product authkeyd-bench
	scripts/bench > .build/BENCHMARKS.md.new && mv .build/BENCHMARKS.md.new BENCHMARKS.md
	@cat BENCHMARKS.md

clean:
	rm -rf .build
