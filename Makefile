# SPDX-License-Identifier: GPL-2.0
#
# ABISS - top-level Makefile.  'make help' lists the targets.

BUILD ?= $(CURDIR)/build
export BUILD
ifneq ($(KSRC),)
export KSRC
endif

GUEST_BIN := $(BUILD)/guest/bin
GUEST_CFLAGS := -O2 -g -Wall -Wextra -static
HOST_CC ?= gcc

.PHONY: all demo check deps tree kernel bench-kernel bench guest uml-test selftest \
	checkpatch clean distclean help

all: demo

help:
	@echo 'make            build everything and run the demo in UML (= make demo)'
	@echo 'make check      every test; T="name ..." runs only those uml-tests'
	@echo 'make kernel     prepare the tree and build the test kernel'
	@echo 'make uml-test   boot the built kernel and run the uml-tests (T= too)'
	@echo 'make selftest   the harness tests'
	@echo 'make bench      I/O scheduler benchmark in one UML boot (not a test)'
	@echo 'make deps       install the Debian packages needed (as root)'
	@echo 'make clean      remove build products but keep the unpacked tree'
	@echo 'make distclean  remove $(BUILD) entirely'
	@echo 'KSRC=/path      use your own Linux 6.1.y tree instead of linux-source-6.1'

deps:
	@scripts/install-deps

tree: deps
	@scripts/prepare-tree

kernel: tree
	@scripts/build-kernel test

bench-kernel: tree
	@scripts/build-kernel bench

# Scheduler benchmark: latency and IOPS tables (uml-test/bench/run).
bench: bench-kernel guest
	@uml-test/bench/run

# Static programs for the guest (the tools and abissd, as they land).
guest: deps
	@mkdir -p $(GUEST_BIN)

demo: kernel guest
	@uml-test/demo/run

check: deps
	@scripts/check $(if $(T),--tests "$(T)")

uml-test: guest
	@uml-test/run --kunit $(T)

selftest:
	@uml-test/selftest/run

clean:
	rm -rf $(BUILD)/obj-* $(BUILD)/cfg-* $(BUILD)/guest $(BUILD)/rootfs \
		$(BUILD)/uml-test $(BUILD)/selftest

distclean:
	rm -rf $(BUILD)
