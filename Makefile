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
# The ABI header (linux/abiss.h) as the series installs it: a copy in the
# tree, as the kernel's tools/include/uapi keeps one, so that the user space
# builds without a kernel tree.  make check compares it with what
# 'make headers' exports from the patched tree.
UAPI := $(CURDIR)/tools/include/uapi
ABISS_H := $(UAPI)/linux/abiss.h
HOST_CC ?= gcc
HOST_BIN := $(BUILD)/host/bin

# abissd and the tools: each program is built from all its sources at once.
PROG_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra \
	-I$(UAPI) -I$(CURDIR)/tools/lib -I$(CURDIR)/tools/libabiss
GUEST_CFLAGS := -static
LIB_SRCS := tools/lib/util.c
LIB_HDRS := tools/lib/util.h
# abissd and rdrt take libabiss's source (abiss_end_reason(), the ioctls).
LIBABISS_SRCS := tools/libabiss/abiss.c
LIBABISS_HDRS := tools/libabiss/abiss.h $(ABISS_H)
ABISSD_SRCS := abissd/abissd.c abissd/policy.c abissd/control.c abissd/calibrate.c \
	$(LIB_SRCS) $(LIBABISS_SRCS)
ABISSD_HDRS := abissd/abissd.h abissd/policy.h $(LIB_HDRS) $(LIBABISS_HDRS)
RDRT_SRCS := tools/rdrt.c tools/lib/pattern.c $(LIB_SRCS) $(LIBABISS_SRCS)
RDRT_HDRS := tools/lib/pattern.h $(LIB_HDRS) $(LIBABISS_HDRS)
ABISS_RUN_SRCS := tools/abiss-run/abiss-run.c $(LIB_SRCS)
PROGS := abissd rdrt abiss-run

# libabiss: static for the host and the guest, shared (libabiss.so.1) for
# the host; its header is installed beside the libraries, in include/.
HOST_LIB := $(BUILD)/host/lib
GUEST_LIB := $(BUILD)/guest/lib
LIBABISS_MAP := tools/libabiss/libabiss.map
HOST_LIBS := $(addprefix $(HOST_LIB)/,libabiss.a libabiss.so.1 libabiss.so) \
	$(BUILD)/host/include/abiss.h
GUEST_LIBS := $(GUEST_LIB)/libabiss.a $(BUILD)/guest/include/abiss.h
# abiss-run's LD_PRELOAD shim: a shared object needing only libc (and libdl).
# The guest runs the host's dynamic programs with the host's libraries, so
# it takes the same shim.
SHIM := lib/abiss/libabiss-run.so
SHIM_SRCS := tools/abiss-run/shim.c $(LIBABISS_SRCS) $(LIB_SRCS)
SHIM_DEPS := $(SHIM_SRCS) tools/abiss-run/shim.map $(LIBABISS_HDRS) $(LIB_HDRS)
# abissctl and ptree: the debugfs stream list, names and tables (streams.c).
ABISSCTL_SRCS := tools/abissctl.c tools/lib/streams.c $(LIB_SRCS)
PTREE_SRCS := tools/ptree.c tools/lib/streams.c $(LIB_SRCS)
STREAMS_HDRS := tools/lib/streams.h $(LIB_HDRS)
PROGS += abissctl ptree

# Test programs of uml-test/prog use the kernel's kselftest harness.
SELFTEST_CFLAGS := -I$(KSRC_DIR)/tools/testing/selftests -Wno-unused-parameter \
	-Wno-sign-compare
GUEST_TESTS := $(patsubst uml-test/prog/%.c,%,$(wildcard uml-test/prog/*.c))

.PHONY: all demo check check-long check-fresh deps tree headers kernel bench-kernel smp-kernel bench guest \
	tools tools-test uml-test qemu-test selftest clean distclean help

all: demo

help:
	@echo 'make            build everything and run the demo in UML (= make demo)'
	@echo 'make check      every test; T="name ..." runs only those uml-tests'
	@echo 'make check-fresh  make check in a fresh Debian 12 root, as CI does (root)'
	@echo 'make check-long the long guards, not in make check: fuzzer and race loops'
	@echo 'make kernel     prepare the tree and build the test kernel'
	@echo 'make uml-test   boot the built kernel and run the uml-tests (T= too)'
	@echo 'make smp-kernel the SMP x86_64 test kernel (bzImage) for qemu'
	@echo 'make qemu-test  boot it in qemu (TCG, 2 vCPUs) and run the uml-tests (T= too)'
	@echo 'make selftest   the harness tests'
	@echo 'make tools      abissd, the tools and libabiss for the host ($(HOST_BIN))'
	@echo 'make tools-test their host-side tests (tools/test/run)'
	@echo 'make guest      the same, static, for the guest ($(GUEST_BIN))'
	@echo 'make bench      benchmark, not a test: elevator, one stream, many streams, host-cpu (a UML boot each, ~17 min; SECS=N)'
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

# The SMP x86_64 test kernel, booted in qemu (uml-test/run --platform qemu).
smp-kernel: tree
	@scripts/build-kernel smp-test

# The uapi headers (linux/abiss.h among them) of the patched tree, to check
# the copy in tools/include/uapi against.
headers: tree
	@$(MAKE) -s -C $(KSRC_DIR) ARCH=x86 O=$(BUILD)/obj-headers \
		INSTALL_HDR_PATH=$(BUILD)/headers headers_install

# Static programs for the guest (uml-test/make-rootfs copies them in):
# abissd, the tools, and the test programs of uml-test/prog.
guest: tree
	@$(MAKE) -s $(GUEST_LIBS) $(BUILD)/guest/$(SHIM) \
		$(addprefix $(GUEST_BIN)/,$(PROGS) $(GUEST_TESTS))

tools:
	@$(MAKE) -s $(HOST_LIBS) $(BUILD)/host/$(SHIM) $(addprefix $(HOST_BIN)/,$(PROGS)) \
		$(BUILD)/host/test/libabiss-test

tools-test: tools
	@tools/test/run $(HOST_BIN)

$(GUEST_BIN)/abissd $(HOST_BIN)/abissd: $(ABISSD_SRCS) $(ABISSD_HDRS)
$(GUEST_BIN)/rdrt $(HOST_BIN)/rdrt: $(RDRT_SRCS) $(RDRT_HDRS)
$(GUEST_BIN)/abissctl $(HOST_BIN)/abissctl: $(ABISSCTL_SRCS) $(STREAMS_HDRS)
$(GUEST_BIN)/ptree $(HOST_BIN)/ptree: $(PTREE_SRCS) $(STREAMS_HDRS)
$(GUEST_BIN)/abiss-run $(HOST_BIN)/abiss-run: $(ABISS_RUN_SRCS) $(LIB_HDRS) $(LIBABISS_HDRS)

$(HOST_LIB)/libabiss.a $(GUEST_LIB)/libabiss.a: $(LIBABISS_SRCS) $(LIBABISS_HDRS)
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) -c -o $(@:.a=.o) $(LIBABISS_SRCS)
	rm -f $@ && ar rcs $@ $(@:.a=.o)

$(HOST_LIB)/libabiss.so.1: $(LIBABISS_SRCS) $(LIBABISS_HDRS) $(LIBABISS_MAP)
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) -fPIC -shared -Wl,-soname,libabiss.so.1 \
		-Wl,--version-script=$(LIBABISS_MAP) -o $@ $(LIBABISS_SRCS)

$(HOST_LIB)/libabiss.so: $(HOST_LIB)/libabiss.so.1
	ln -sf libabiss.so.1 $@

$(BUILD)/host/include/abiss.h $(BUILD)/guest/include/abiss.h: tools/libabiss/abiss.h
	@mkdir -p $(@D)
	cp $< $@

$(BUILD)/host/$(SHIM) $(BUILD)/guest/$(SHIM): $(SHIM_DEPS)
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) -U_FORTIFY_SOURCE -fPIC -shared \
		-Wl,--version-script=tools/abiss-run/shim.map -o $@ $(SHIM_SRCS) -ldl

# libabiss's host test (tools/test/libabiss), on the shared library.
$(BUILD)/host/test/libabiss-test: tools/test/libabiss-test.c $(HOST_LIBS)
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) -I$(BUILD)/host/include -o $@ $< -L$(HOST_LIB) -labiss \
		-Wl,-rpath,'$$ORIGIN/../lib'

# The test programs may use libabiss, the test pattern and util.h.
GUEST_TEST_SRCS := tools/lib/pattern.c $(LIB_SRCS)
$(addprefix $(GUEST_BIN)/,$(GUEST_TESTS)): $(GUEST_BIN)/%: uml-test/prog/%.c $(wildcard uml-test/prog/*.h) $(ABISS_H) \
		$(GUEST_LIBS) $(GUEST_TEST_SRCS) $(RDRT_HDRS)
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) $(SELFTEST_CFLAGS) $(GUEST_CFLAGS) -I$(BUILD)/guest/include \
		-o $@ $< $(GUEST_TEST_SRCS) -L$(GUEST_LIB) -labiss -lpthread

$(GUEST_BIN)/%:
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) $(GUEST_CFLAGS) -o $@ $(filter %.c,$^)

$(HOST_BIN)/%:
	@mkdir -p $(@D)
	$(HOST_CC) $(PROG_CFLAGS) -o $@ $(filter %.c,$^)

# The benchmark, not a test (uml-test/bench/run, about 17 min): a boot of the
# bench kernel per script, the elevator alone and its IOPS beside an ABISS
# stream (sched-latency), one stream beside greedy load against other readers
# and abiss-run's fio (streams), many streams (scale), and one stream while
# the host's CPUs are busy (host-cpu); tables, report and plots in
# build/bench/DATE-TIME.  SECS=N: seconds each measured run takes; --only,
# --reps and -e: run uml-test/bench/run itself (--help).
bench: bench-kernel guest
	@uml-test/bench/run $(if $(SECS),--secs $(SECS))

demo: kernel guest
	@uml-test/demo/run

check: deps
	@scripts/check $(if $(FRESH),--fresh) $(if $(T),--tests "$(T)")

# The long guards (Documentation/development.rst): the fuzzer and the race
# loops run short in make check; here 10^6 calls and 1000 rounds per race,
# in two guests (about 20 minutes on 2 cores).
LONG_CALLS := 1000000
LONG_ROUNDS := 1000
check-long: kernel guest
	@uml-test/run -j 2 -e ABISS_FUZZ_CALLS=$(LONG_CALLS) -e ABISS_RACE_ROUNDS=$(LONG_ROUNDS) \
		$(if $(SEED),-e ABISS_FUZZ_SEED=$(SEED) -e ABISS_RACE_SEED=$(SEED)) \
		--test-timeout 5400 -t 6000 -o $(BUILD)/uml-test-long abiss-fuzz abiss-races

# make check in a fresh debootstrap root (scripts/check-fresh): what .ci/run
# does, so that nothing installed here by hand can hide a missing package.
check-fresh:
	@scripts/check-fresh $(if $(RUNS),--runs $(RUNS)) -- $(if $(FRESH),FRESH=1) $(if $(T),T="$(T)")

uml-test: guest
	@uml-test/run --kunit $(T)

qemu-test: guest
	@uml-test/run --platform qemu --kunit $(T)

selftest:
	@uml-test/selftest/run

clean:
	rm -rf $(BUILD)/obj-* $(BUILD)/cfg-* $(BUILD)/guest $(BUILD)/host $(BUILD)/rootfs \
		$(BUILD)/uml-test $(BUILD)/qemu-test $(BUILD)/selftest

distclean:
	rm -rf $(BUILD)
