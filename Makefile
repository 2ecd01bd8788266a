# SPDX-License-Identifier: GPL-2.0
#
# ABISS - top-level Makefile.  'make help' lists the targets.

BUILD ?= $(CURDIR)/build
export BUILD
ifneq ($(KSRC),)
export KSRC
endif

KSRC_DIR := $(if $(KSRC),$(KSRC),$(BUILD)/linux)
GUEST_BIN := $(BUILD)/guest/bin
# The kernel's user-space headers, exported from the patched tree.
UAPI := $(BUILD)/headers/include
GUEST_CFLAGS := -O2 -g -Wall -Wextra -static -I$(UAPI)
# Test programs of uml-test/prog use the kernel's kselftest harness.
SELFTEST_CFLAGS := -I$(KSRC_DIR)/tools/testing/selftests -Wno-unused-parameter -Wno-sign-compare
GUEST_TESTS := $(patsubst uml-test/prog/%.c,$(GUEST_BIN)/%,$(wildcard uml-test/prog/*.c))

.PHONY: all demo check deps tree headers kernel bench-kernel guest uml-test selftest \
	checkpatch clean distclean help

all: demo

help:
	@echo 'make            build everything and run the demo in UML (= make demo)'
	@echo 'make check      every test; T="name ..." runs only those uml-tests'
	@echo 'make kernel     prepare the tree and build the test kernel'
	@echo 'make uml-test   boot the built kernel and run the uml-tests (T= too)'
	@echo 'make selftest   the harness tests'
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

# The uapi headers (linux/abiss.h among them) of the patched tree.
headers: tree
	@$(MAKE) -s -C $(KSRC_DIR) ARCH=x86 O=$(BUILD)/obj-headers \
		INSTALL_HDR_PATH=$(BUILD)/headers headers_install

# Static programs for the guest: the tools, abissd and uml-test/prog.
guest: headers
	@mkdir -p $(GUEST_BIN)
	@$(MAKE) -s $(GUEST_TESTS)

$(GUEST_BIN)/%: uml-test/prog/%.c $(UAPI)/linux/abiss.h
	$(CC) $(GUEST_CFLAGS) $(SELFTEST_CFLAGS) -o $@ $< -lpthread

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
