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
# The kernel's user-space headers (linux/abiss.h), exported from the
# patched tree by 'make headers'.
UAPI := $(BUILD)/headers/include
ABISS_H := $(UAPI)/linux/abiss.h
HOST_CC ?= gcc
HOST_BIN := $(BUILD)/host/bin

# abissd and the tools: each program is built from all its sources at once.
PROG_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra \
	-I$(UAPI) -I$(CURDIR)/tools/lib
GUEST_CFLAGS := -static
LIB_SRCS := tools/lib/util.c
LIB_HDRS := tools/lib/util.h
ABISSD_SRCS := abissd/abissd.c abissd/policy.c abissd/control.c abissd/calibrate.c $(LIB_SRCS)
ABISSD_HDRS := abissd/abissd.h abissd/policy.h $(LIB_HDRS) $(ABISS_H)
RDRT_SRCS := tools/rdrt.c tools/lib/pattern.c $(LIB_SRCS)
RDRT_HDRS := tools/lib/pattern.h $(LIB_HDRS) $(ABISS_H)
PROGS := abissd rdrt

# Test programs of uml-test/prog use the kernel's kselftest harness.
SELFTEST_CFLAGS := -I$(KSRC_DIR)/tools/testing/selftests -Wno-unused-parameter \
	-Wno-sign-compare
GUEST_TESTS := $(patsubst uml-test/prog/%.c,%,$(wildcard uml-test/prog/*.c))

.PHONY: all demo check deps tree headers kernel bench-kernel bench guest tools tools-test \
	uml-test selftest clean distclean help

all: demo

help:
	@echo 'make            build everything and run the demo in UML (= make demo)'
	@echo 'make check      every test; T="name ..." runs only those uml-tests'
	@echo 'make kernel     prepare the tree and build the test kernel'
	@echo 'make uml-test   boot the built kernel and run the uml-tests (T= too)'
	@echo 'make selftest   the harness tests'
	@echo 'make tools      abissd and the tools for the host ($(HOST_BIN))'
	@echo 'make tools-test their host-side tests (tools/test/run)'
	@echo 'make guest      the same, static, for the guest ($(GUEST_BIN))'
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

# The uapi headers (linux/abiss.h among them) of the patched tree.
headers: tree
	@$(MAKE) -s -C $(KSRC_DIR) ARCH=x86 O=$(BUILD)/obj-headers \
		INSTALL_HDR_PATH=$(BUILD)/headers headers_install

# Static programs for the guest (uml-test/make-rootfs copies them in):
# abissd, the tools, and the test programs of uml-test/prog.
guest: headers
	@$(MAKE) -s $(addprefix $(GUEST_BIN)/,$(PROGS) $(GUEST_TESTS))

tools: headers
	@$(MAKE) -s $(addprefix $(HOST_BIN)/,$(PROGS))

tools-test: tools
	@tools/test/run $(HOST_BIN)

$(GUEST_BIN)/abissd $(HOST_BIN)/abissd: $(ABISSD_SRCS) $(ABISSD_HDRS)
$(GUEST_BIN)/rdrt $(HOST_BIN)/rdrt: $(RDRT_SRCS) $(RDRT_HDRS)

$(addprefix $(GUEST_BIN)/,$(GUEST_TESTS)): $(GUEST_BIN)/%: uml-test/prog/%.c $(ABISS_H)
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) $(SELFTEST_CFLAGS) $(GUEST_CFLAGS) -o $@ $< -lpthread

$(GUEST_BIN)/%:
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) $(GUEST_CFLAGS) -o $@ $(filter %.c,$^)

$(HOST_BIN)/%:
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) -o $@ $(filter %.c,$^)

# Scheduler benchmark: latency and IOPS tables (uml-test/bench/run).
bench: bench-kernel guest
	@uml-test/bench/run

demo: kernel guest
	@uml-test/demo/run

check: deps
	@scripts/check $(if $(T),--tests "$(T)")

uml-test: guest
	@uml-test/run --kunit $(T)

selftest:
	@uml-test/selftest/run

clean:
	rm -rf $(BUILD)/obj-* $(BUILD)/cfg-* $(BUILD)/guest $(BUILD)/host $(BUILD)/rootfs \
		$(BUILD)/uml-test $(BUILD)/selftest

distclean:
	rm -rf $(BUILD)
