# authkeyd: the commands a newcomer needs. Each installs its own Debian
# packages first (scripts/install-deps), so they work on a fresh machine.

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
BUILD_LOG := .build/build.log
# The pages, usage and completions checked against the code; beside
# `lint-man`, not in the long end-to-end run (they start only authctl and
# one daemon).
DOCUMENTATION_TESTS = $(SWIFT) test --skip-build --filter EndToEndTests.DocumentationTests

.PHONY: print-release-build agent-screens plugins all deps build demo test bench bench-quick vm-test fuzz fuzz-smoke reliability test-sanitizers coverage clean install uninstall check-units lint-man

all: build

deps:
	@scripts/install-deps

# Debug build of every product; fails on any compiler warning, or on an
# import a target does not declare in Package.swift (or a declared
# dependency it does not import).
build: deps
	@SWIFT=$(SWIFT) scripts/check-imports >/dev/null || SWIFT=$(SWIFT) scripts/check-imports
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@! grep -E "warning:" $(BUILD_LOG) | grep -v "^warning: 'main'" || { echo "error: the build has warnings"; exit 1; }

# The main job: authkeyd serving virtual security keys, and authctl walking
# through them.
demo: build
	scripts/demo

# Every test: unit, protocol conformance and the broker in process (in
# parallel), the real binaries end to end (one at a time, the reliability
# counts at full size), python-fido2's device tests, and the documentation
# against the code (`lint-man`: the man pages and DocumentationTests).
test: build
	scripts/rp-venv
	$(SWIFT) test --skip-build --skip EndToEndTests
	AUTHKEYD_RELIABILITY_SCALE=full $(SWIFT) test --skip-build --filter EndToEndTests --skip EndToEndTests.DocumentationTests --no-parallel
	scripts/device-tests
	scripts/lint-man
	$(DOCUMENTATION_TESTS)

# Figures for BENCHMARKS.md: every row, side by side, release builds
# linked as `make install` links them (scripts/bench says how).
bench: deps
	@mkdir -p .build
	scripts/bench > .build/BENCHMARKS.md.new && mv .build/BENCHMARKS.md.new BENCHMARKS.md
	@cat BENCHMARKS.md

# The same rows with fewer rounds, written to .build/BENCHMARKS.quick.md
# (BENCHMARKS.md is left alone).
bench-quick: deps
	@mkdir -p .build
	scripts/bench --quick > .build/BENCHMARKS.quick.md
	@cat .build/BENCHMARKS.quick.md

# The desktop agent's dialogs under Xvfb, answered with xdotool (the
# end-to-end AgentDesktopTests): every screen in .build/agent-screens/,
# and the two the README shows copied into docs/.
agent-screens: build
	scripts/rp-venv
	$(SWIFT) test --skip-build --filter EndToEndTests.AgentDesktopTests
	cp .build/agent-screens/2-pin.png docs/agent-pin.png
	cp .build/agent-screens/5-transaction.png docs/agent-transaction.png

# The kernel path in a QEMU guest: the virtual key as a UHID device, found
# through libfido2's manifest and udev events, used through hidraw.
vm-test: build
	scripts/vm-test .build/debug

# libFuzzer over the protocol, the virtual key's input and device replies
# (5 minutes each; FUZZ_SECONDS=N to change), and a 30-second smoke of each.
FUZZ_SECONDS ?= 300
fuzz: deps
	scripts/fuzz --seconds $(FUZZ_SECONDS)

fuzz-smoke: deps
	scripts/fuzz --smoke

# The reliability suites (1,000 client deaths, 10,000
# connections, 200 SIGKILLs, ...) with their figures written to RELIABILITY.md.
reliability: build
	AUTHKEYD_RELIABILITY_SCALE=full scripts/reliability --skip-build

# Line and region coverage per module over the unit and in-process suites,
# as a table (a build of its own in .build/coverage; llvm-cov from the
# toolchain). `scripts/coverage --end-to-end` adds the end-to-end suites.
coverage: deps
	scripts/coverage

# The unit and in-process suites and the end-to-end suites where the
# process's races live (reliability counts at a tenth) under
# ThreadSanitizer, then AddressSanitizer (each a separate build with line
# tables only, in .build/tsan and .build/asan); scripts/test-sanitizers
# says which and why.
test-sanitizers: deps
	scripts/test-sanitizers

clean:
	rm -rf .build

# Installing as a system service: release binaries with the Swift runtime
# linked in (they need only Debian's libraries), OpenSSH's security-key
# provider (libauthkeyd-sk.so, linked the same way), the systemd units
# (system and user), the udev rule, the sysusers.d entry, the man pages and
# the shell completions, under $(DESTDIR)$(PREFIX). Into the running system
# (no DESTDIR, as root) it also creates the groups and reloads systemd and
# udev; `systemctl enable --now authkeyd.socket` is left to you.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSTEMDSYSTEMUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPLETIONDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# The provider's directory: under lib, so that ssh-agent's default -P allow
# list (/usr/lib*/*,/usr/local/lib*/*) accepts it for `ssh-add -S`.
PROVIDERDIR ?= $(PREFIX)/lib/authkeyd
# Where libpam looks for modules named without a path: Debian's own are in
# /lib/x86_64-linux-gnu/security; a module of /usr/local is named by its
# full path in /etc/pam.d (pam_authkeyd(8)).
PAMDIR ?= $(PREFIX)/lib/security
# Where SwiftPM builds the release binaries.
SCRATCH_PATH ?= .build
INSTALLED_PROGRAMS := authkeyd authctl authkeyd-virtkey
# One release configuration for everything installed, and for the bench
# (scripts/bench), so each module is compiled once for all of them:
# - the Swift runtime linked in (-static-stdlib): each program loads only
#   the runtime pages it uses and binds no runtime symbols at start-up; the
#   provider and the PAM module, loaded into ssh-sk-helper and sudo, need
#   no Swift library on the machine (their exports are limited to the
#   functions their hosts look up, by the version scripts Package.swift
#   gives the linker, so none of the runtime's symbols can bind to or
#   shadow the host's);
# - no $ORIGIN run path, which had the loader look for each of libc, libm,
#   libstdc++ and libgcc_s in ten directories under bin/ before the
#   system's (about 40 failed system calls at every start of authctl).
# (Package.swift links both libraries -z nodelete.)
RELEASE_BUILD_FLAGS = -c release -Xswiftc -static-stdlib --disable-local-rpath
INSTALL_DIRS = DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" BINDIR="$(BINDIR)" MANDIR="$(MANDIR)" \
	SYSTEMDSYSTEMUNITDIR="$(SYSTEMDSYSTEMUNITDIR)" SYSTEMDUSERUNITDIR="$(SYSTEMDUSERUNITDIR)" \
	UDEVRULESDIR="$(UDEVRULESDIR)" SYSUSERSDIR="$(SYSUSERSDIR)" BASHCOMPLETIONDIR="$(BASHCOMPLETIONDIR)" \
	ZSHCOMPLETIONDIR="$(ZSHCOMPLETIONDIR)" FISHCOMPLETIONDIR="$(FISHCOMPLETIONDIR)" PROVIDERDIR="$(PROVIDERDIR)" \
	PAMDIR="$(PAMDIR)"

install: deps plugins
	for product in $(INSTALLED_PROGRAMS); do \
		$(SWIFT) build $(RELEASE_BUILD_FLAGS) --scratch-path $(SCRATCH_PATH) --product $$product || exit 1; \
	done
	$(INSTALL_DIRS) scripts/install-files --binaries $(SCRATCH_PATH)/release --provider $(SCRATCH_PATH)/release \
		--pam-module $(SCRATCH_PATH)/release

# scripts/bench builds what it measures with these flags, in this scratch path.
print-release-build:
	@echo $(RELEASE_BUILD_FLAGS) --scratch-path $(SCRATCH_PATH)

# The two libraries other programs load: OpenSSH's provider and the PAM module.
plugins: deps
	$(SWIFT) build $(RELEASE_BUILD_FLAGS) --scratch-path $(SCRATCH_PATH) --product authkeyd-sk
	$(SWIFT) build $(RELEASE_BUILD_FLAGS) --scratch-path $(SCRATCH_PATH) --product pam_authkeyd

uninstall:
	$(INSTALL_DIRS) scripts/install-files --uninstall

# The units: `systemd-analyze verify`, and the system service's exposure
# (`systemd-analyze security`) at 2.0 or lower.
check-units:
	scripts/check-units

# The documentation against the code: the man pages clean under `mandoc
# -Tlint` and groff and rendered by man, then DocumentationTests (every
# flag, method, setting and completion in its page; they run the built
# binaries, so this builds first). `make test` runs both.
lint-man: build
	scripts/lint-man
	$(DOCUMENTATION_TESTS)
