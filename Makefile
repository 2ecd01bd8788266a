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
HOST_BIN := $(BUILD)/host/bin
HOST_LIB := $(BUILD)/host/lib
GUEST_LIB := $(BUILD)/guest/lib

# Where 'make install' puts things (GNU coding standards); each can be set on
# the command line.  Distributions pass PREFIX=/usr sysconfdir=/etc
# localstatedir=/var.
PREFIX ?= /usr/local
prefix = $(PREFIX)
bindir = $(prefix)/bin
sbindir = $(prefix)/sbin
libdir = $(prefix)/lib
includedir = $(prefix)/include
mandir = $(prefix)/share/man
sysconfdir = $(prefix)/etc
localstatedir = $(prefix)/var
runstatedir = /run
systemdsystemunitdir = $(prefix)/lib/systemd/system
udevrulesdir = $(prefix)/lib/udev/rules.d
tmpfilesdir = $(prefix)/lib/tmpfiles.d
pkgconfigdir = $(libdir)/pkgconfig
DESTDIR =
INSTALL = install

# CC, CFLAGS, CPPFLAGS and LDFLAGS are the user's (dpkg-buildflags gives a
# distribution's); what the code cannot build without is appended after
# them, in ABISS_CFLAGS.  HOST_CC is the old name of CC.
ifdef HOST_CC
CC := $(HOST_CC)
endif
CFLAGS ?= -O2 -g -Wall -Wextra
# The headers as installed, <abiss/abiss.h> and <abiss/linux-abiss.h> (the
# uapi copy, as no installed kernel header has it), for every program, so
# that the build tree compiles against what a user of libabiss gets.
# include/abiss itself too, for the programs that say "abiss.h".
GEN_INC := $(BUILD)/host/include
LIBABISS_HDRS := $(GEN_INC)/abiss/abiss.h $(GEN_INC)/abiss/linux-abiss.h
ABISS_CFLAGS = -std=gnu11 -D_GNU_SOURCE -I$(GEN_INC) -I$(GEN_INC)/abiss -I$(UAPI) \
	-I$(CURDIR)/tools/lib $(DIR_DEFS)
# The paths compiled in: abissd's configuration, pid file, socket and
# state, abiss-run's shim.  The guest is laid out as a distribution is.
$(BUILD)/host/%: DIR_DEFS = -DSYSCONFDIR="\"$(sysconfdir)\"" \
	-DLOCALSTATEDIR="\"$(localstatedir)\"" -DRUNSTATEDIR="\"$(runstatedir)\"" \
	-DLIBDIR="\"$(libdir)\""
$(BUILD)/guest/%: DIR_DEFS = -DSYSCONFDIR="\"/etc\"" -DLOCALSTATEDIR="\"/var\"" \
	-DRUNSTATEDIR="\"/run\"" -DLIBDIR="\"/usr/lib\""
ALL_CFLAGS = $(CPPFLAGS) $(CFLAGS) $(ABISS_CFLAGS)
GUEST_LDFLAGS := -static

# Each program links its objects; those of abissd and rdrt with libabiss
# (libabiss.so on the host, libabiss.a in the static guest).
LIB_SRCS := tools/lib/util.c
ABISSD_SRCS := $(wildcard abissd/*.c) $(LIB_SRCS)
RDRT_SRCS := tools/rdrt.c tools/lib/pattern.c $(LIB_SRCS)
ABISS_RUN_SRCS := tools/abiss-run/abiss-run.c $(LIB_SRCS)
# abissctl and ptree: the debugfs stream list, names and tables (streams.c).
ABISSCTL_SRCS := tools/abissctl.c tools/lib/streams.c $(LIB_SRCS)
PTREE_SRCS := tools/ptree.c tools/lib/streams.c $(LIB_SRCS)
PROGS := abissd rdrt abiss-run abissctl ptree
SBIN_PROGS := abissd abissctl
BIN_PROGS := rdrt ptree abiss-run
LIBABISS_USERS := abissd rdrt
HOST_OBJ := $(BUILD)/host/obj
GUEST_OBJ := $(BUILD)/guest/obj
hobj = $(patsubst %.c,$(HOST_OBJ)/%.o,$(1))
gobj = $(patsubst %.c,$(GUEST_OBJ)/%.o,$(1))

# libabiss: libabiss.so.1.0.0 (soname libabiss.so.1) and libabiss.a for the
# host, libabiss.a for the guest; abiss.pc for pkg-config.
LIBABISS_SRC := tools/libabiss/abiss.c
LIBABISS_MAP := tools/libabiss/libabiss.map
LIBABISS_SO := libabiss.so.1.0.0
HOST_LIBS := $(addprefix $(HOST_LIB)/,$(LIBABISS_SO) libabiss.so.1 libabiss.so libabiss.a) \
	$(LIBABISS_HDRS) $(BUILD)/host/abiss.pc
GUEST_LIBS := $(GUEST_LIB)/libabiss.a $(LIBABISS_HDRS)
VERSION := $(shell sed -n 's/^\#define ABISS_VERSION\t"\(.*\)"$$/\1/p' tools/lib/util.h)
# A page per libabiss function, each a link to libabiss(3): the functions
# the version script exports (tools/test/libabiss checks them against the
# header).
LIBABISS_FUNCS := $(shell sed -n 's/^\t*\(abiss_[a-z_]*\);$$/\1/p' $(LIBABISS_MAP))
MAN_LINKS := $(patsubst %,$(BUILD)/host/man/man3/%.3,$(LIBABISS_FUNCS))
MAN_PAGES := abissd/abissd.8 abissd/abissd.conf.5 tools/abissctl.8 tools/rdrt.1 tools/ptree.1 \
	tools/abiss-run/abiss-run.1 tools/libabiss/libabiss.3

# abiss-run's LD_PRELOAD shim: a shared object needing only libc (and
# libdl), so it compiles libabiss's source in rather than linking it.  The
# guest runs the host's dynamic programs with the host's libraries, so it
# takes the same shim (built with the guest's paths).
SHIM := lib/abiss/libabiss-run.so
SHIM_SRCS := tools/abiss-run/shim.c $(LIBABISS_SRC) $(LIB_SRCS)

# The build tree's programs find libabiss.so in ../lib; the installed ones
# are linked again without that run path (in $(BUILD)/host/inst), as no
# distribution wants one and the library is on the system's path there.
INST_BIN := $(BUILD)/host/inst
BUILD_RPATH := -Wl,-rpath,'$$ORIGIN/../lib'

# Test programs of uml-test/prog use the kernel's kselftest harness.
SELFTEST_CFLAGS := -isystem $(KSRC_DIR)/tools/testing/selftests -Wno-unused-parameter \
	-Wno-sign-compare
GUEST_TESTS := $(patsubst uml-test/prog/%.c,%,$(wildcard uml-test/prog/*.c))

.PHONY: all demo check check-smp check-long check-fresh deps tree headers kernel bench-kernel smp-kernel bench guest \
	tools tools-test install uninstall uml-test qemu-test selftest clean distclean help FORCE

all: demo

help:
	@echo 'make            build everything and run the demo in UML (= make demo)'
	@echo 'make check      every test; T="name ..." runs only those uml-tests'
	@echo 'make check-fresh  make check in a fresh Debian 12 root, as CI does (root)'
	@echo 'make check-long the long guards, not in make check: fuzzer and race loops'
	@echo 'make kernel     prepare the tree and build the test kernel'
	@echo 'make uml-test   boot the built kernel and run the uml-tests (T= too)'
	@echo 'make smp-kernel the SMP x86_64 test kernel (bzImage) for qemu'
	@echo 'make check-smp  it, in qemu: KUnit and the uml-tests chosen for SMP (T= too)'
	@echo 'make qemu-test  boot it in qemu (TCG, 2 vCPUs) and run the uml-tests (T= too)'
	@echo 'make selftest   the harness tests'
	@echo 'make tools      abissd, the tools and libabiss for the host ($(HOST_BIN));'
	@echo '                CC, CFLAGS, CPPFLAGS, LDFLAGS are honoured, no kernel tree needed'
	@echo 'make tools-test their host-side tests (tools/test/run)'
	@echo 'make install    install them (no root needed with DESTDIR); PREFIX=$(PREFIX), DESTDIR,'
	@echo '                bindir, sbindir, libdir, sysconfdir, localstatedir, ... as GNU make'
	@echo 'make uninstall  remove them again, but for abissd.conf'
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

# What 'make install' copies, built as the build tree's programs are.
INSTALL_SRCS := $(HOST_LIBS) $(BUILD)/host/$(SHIM) $(addprefix $(INST_BIN)/,$(PROGS)) \
	$(MAN_LINKS) $(BUILD)/host/abissd.service

tools:
	@$(MAKE) -s $(HOST_LIBS) $(BUILD)/host/$(SHIM) $(addprefix $(HOST_BIN)/,$(PROGS)) \
		$(MAN_LINKS) $(BUILD)/host/test/libabiss-test

tools-test: tools
	@tools/test/run $(HOST_BIN)

# The list of what this installs is tools/test/install-files (checked by
# tools/test/install).  An abissd.conf already there is the administrator's
# and is kept.
install:
	@$(MAKE) -s $(INSTALL_SRCS)
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) $(DESTDIR)$(libdir)/abiss \
		$(DESTDIR)$(includedir)/abiss $(DESTDIR)$(pkgconfigdir) \
		$(addprefix $(DESTDIR)$(mandir)/man,1 3 5 8) $(DESTDIR)$(sysconfdir)/abiss \
		$(DESTDIR)$(systemdsystemunitdir) $(DESTDIR)$(udevrulesdir) $(DESTDIR)$(tmpfilesdir)
	$(INSTALL) -m 755 $(addprefix $(INST_BIN)/,$(SBIN_PROGS)) $(DESTDIR)$(sbindir)
	$(INSTALL) -m 755 $(addprefix $(INST_BIN)/,$(BIN_PROGS)) $(DESTDIR)$(bindir)
	$(INSTALL) -m 644 $(BUILD)/host/$(SHIM) $(DESTDIR)$(libdir)/abiss
	$(INSTALL) -m 644 $(HOST_LIB)/$(LIBABISS_SO) $(HOST_LIB)/libabiss.a $(DESTDIR)$(libdir)
	ln -sf $(LIBABISS_SO) $(DESTDIR)$(libdir)/libabiss.so.1
	ln -sf libabiss.so.1 $(DESTDIR)$(libdir)/libabiss.so
	$(INSTALL) -m 644 $(LIBABISS_HDRS) $(DESTDIR)$(includedir)/abiss
	$(INSTALL) -m 644 $(BUILD)/host/abiss.pc $(DESTDIR)$(pkgconfigdir)
	$(foreach s,1 5 8,$(INSTALL) -m 644 $(filter %.$(s),$(MAN_PAGES)) $(DESTDIR)$(mandir)/man$(s) &&) true
	$(INSTALL) -m 644 $(filter %.3,$(MAN_PAGES)) $(MAN_LINKS) $(DESTDIR)$(mandir)/man3
	[ -e $(DESTDIR)$(sysconfdir)/abiss/abissd.conf ] || \
		$(INSTALL) -m 644 abissd/abissd.conf.example $(DESTDIR)$(sysconfdir)/abiss/abissd.conf
	$(INSTALL) -m 644 $(BUILD)/host/abissd.service $(DESTDIR)$(systemdsystemunitdir)
	$(INSTALL) -m 644 abissd/abissd.tmpfiles $(DESTDIR)$(tmpfilesdir)/abissd.conf
	$(INSTALL) -m 644 abissd/60-abiss.rules $(DESTDIR)$(udevrulesdir)

# The configuration is left, as a package's is until it is purged.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(sbindir)/,$(SBIN_PROGS)) \
		$(addprefix $(DESTDIR)$(bindir)/,$(BIN_PROGS)) \
		$(DESTDIR)$(libdir)/$(SHIM:lib/%=%) \
		$(addprefix $(DESTDIR)$(libdir)/,$(LIBABISS_SO) libabiss.so.1 libabiss.so libabiss.a) \
		$(addprefix $(DESTDIR)$(includedir)/abiss/,abiss.h linux-abiss.h) \
		$(DESTDIR)$(pkgconfigdir)/abiss.pc \
		$(foreach p,$(MAN_PAGES) $(MAN_LINKS),$(DESTDIR)$(mandir)/man$(subst .,,$(suffix $(p)))/$(notdir $(p))) \
		$(DESTDIR)$(systemdsystemunitdir)/abissd.service $(DESTDIR)$(tmpfilesdir)/abissd.conf \
		$(DESTDIR)$(udevrulesdir)/60-abiss.rules
	-rmdir $(DESTDIR)$(libdir)/abiss $(DESTDIR)$(includedir)/abiss

# Everything compiled depends on the compiler, the flags and the paths
# compiled in: this file changes when they do, so that 'make install
# PREFIX=/usr' after 'make tools' does not install programs that look for
# /usr/local/etc.
FORCE:
$(BUILD)/host/flags $(BUILD)/guest/flags: FORCE
	@mkdir -p $(@D)
	@echo '$(subst ','\'',$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(VERSION) $(prefix) $(sbindir) $(libdir) $(includedir))' > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

$(HOST_OBJ)/%.o: %.c $(BUILD)/host/flags | $(LIBABISS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(HOST_OBJ)/%.pic.o: %.c $(BUILD)/host/flags | $(LIBABISS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(GUEST_OBJ)/%.o: %.c $(BUILD)/guest/flags | $(LIBABISS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(HOST_OBJ) $(GUEST_OBJ) -name '*.d' 2> /dev/null)

$(HOST_BIN)/abissd $(INST_BIN)/abissd: $(call hobj,$(ABISSD_SRCS))
$(HOST_BIN)/rdrt $(INST_BIN)/rdrt: $(call hobj,$(RDRT_SRCS))
$(HOST_BIN)/abissctl $(INST_BIN)/abissctl: $(call hobj,$(ABISSCTL_SRCS))
$(HOST_BIN)/ptree $(INST_BIN)/ptree: $(call hobj,$(PTREE_SRCS))
$(HOST_BIN)/abiss-run $(INST_BIN)/abiss-run: $(call hobj,$(ABISS_RUN_SRCS))
$(GUEST_BIN)/abissd: $(call gobj,$(ABISSD_SRCS))
$(GUEST_BIN)/rdrt: $(call gobj,$(RDRT_SRCS))
$(GUEST_BIN)/abissctl: $(call gobj,$(ABISSCTL_SRCS))
$(GUEST_BIN)/ptree: $(call gobj,$(PTREE_SRCS))
$(GUEST_BIN)/abiss-run: $(call gobj,$(ABISS_RUN_SRCS))
$(addprefix $(HOST_BIN)/,$(LIBABISS_USERS)) $(addprefix $(INST_BIN)/,$(LIBABISS_USERS)): \
	$(HOST_LIB)/libabiss.so
$(addprefix $(GUEST_BIN)/,$(LIBABISS_USERS)): $(GUEST_LIB)/libabiss.a

LIBABISS_LIB = $(filter %/libabiss.so %/libabiss.a,$^)
LINK_LIBABISS = $(if $(LIBABISS_LIB),-L$(dir $(LIBABISS_LIB)) -labiss)
$(HOST_BIN)/%: $(BUILD)/host/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_LIBABISS) \
		$(if $(LINK_LIBABISS),$(BUILD_RPATH))

$(INST_BIN)/%: $(BUILD)/host/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_LIBABISS)

$(GUEST_BIN)/%: $(BUILD)/guest/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) $(GUEST_LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_LIBABISS)

$(HOST_LIB)/libabiss.a: $(call hobj,$(LIBABISS_SRC))
$(GUEST_LIB)/libabiss.a: $(call gobj,$(LIBABISS_SRC))
$(HOST_LIB)/libabiss.a $(GUEST_LIB)/libabiss.a:
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(HOST_LIB)/$(LIBABISS_SO): $(HOST_OBJ)/tools/libabiss/abiss.pic.o $(LIBABISS_MAP) $(BUILD)/host/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libabiss.so.1 \
		-Wl,--version-script=$(LIBABISS_MAP) -o $@ $<

$(HOST_LIB)/libabiss.so.1: $(HOST_LIB)/$(LIBABISS_SO)
	ln -sf $(LIBABISS_SO) $@

$(HOST_LIB)/libabiss.so: $(HOST_LIB)/libabiss.so.1
	ln -sf libabiss.so.1 $@

# The installed headers: libabiss's says <abiss/linux-abiss.h>, the uapi
# copy under the name it has there.
$(GEN_INC)/abiss/abiss.h: tools/libabiss/abiss.h
	@mkdir -p $(@D)
	cp $< $@

$(GEN_INC)/abiss/linux-abiss.h: $(ABISS_H)
	@mkdir -p $(@D)
	cp $< $@

$(BUILD)/host/abiss.pc: tools/libabiss/abiss.pc.in $(BUILD)/host/flags
	sed -e 's|@prefix@|$(prefix)|g' -e 's|@libdir@|$(libdir)|g' \
		-e 's|@includedir@|$(includedir)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

$(BUILD)/host/abissd.service: abissd/abissd.service.in $(BUILD)/host/flags
	sed -e 's|@sbindir@|$(sbindir)|g' $< > $@

$(MAN_LINKS): $(LIBABISS_MAP)
	@mkdir -p $(@D)
	echo '.so man3/libabiss.3' > $@

# The shim, all its sources at once.  It wraps open() and the C library's
# fortified __open_2(), so it is built without _FORTIFY_SOURCE, whatever
# CPPFLAGS says.
$(BUILD)/host/$(SHIM) $(BUILD)/guest/$(SHIM): $(SHIM_SRCS) tools/abiss-run/shim.map | $(LIBABISS_HDRS)
$(BUILD)/host/$(SHIM): $(BUILD)/host/flags
$(BUILD)/guest/$(SHIM): $(BUILD)/guest/flags
$(BUILD)/host/$(SHIM) $(BUILD)/guest/$(SHIM):
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -U_FORTIFY_SOURCE -fPIC $(LDFLAGS) -shared \
		-Wl,--version-script=tools/abiss-run/shim.map -o $@ $(SHIM_SRCS) -ldl

# libabiss's host test (tools/test/libabiss), on the shared library.
$(BUILD)/host/test/libabiss-test: tools/test/libabiss-test.c $(HOST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -L$(HOST_LIB) -labiss $(BUILD_RPATH)

# The test programs may use libabiss, the test pattern and util.h.
GUEST_TEST_SRCS := tools/lib/pattern.c $(LIB_SRCS)
$(addprefix $(GUEST_BIN)/,$(GUEST_TESTS)): $(GUEST_BIN)/%: uml-test/prog/%.c $(wildcard uml-test/prog/*.h) $(ABISS_H) \
		$(GUEST_LIBS) $(GUEST_TEST_SRCS) $(wildcard tools/lib/*.h) $(BUILD)/guest/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SELFTEST_CFLAGS) $(LDFLAGS) $(GUEST_LDFLAGS) \
		-o $@ $< $(GUEST_TEST_SRCS) -L$(GUEST_LIB) -labiss -lpthread

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

# The SMP x86_64 platform (issue 25): the SMP test kernel, and in qemu with
# 2 vCPUs the KUnit suites and scripts/check's SMP_TESTS (or T=), counted
# like make check.  Not part of make check (CI's time: README).
check-smp: deps
	@scripts/check $(if $(FRESH),--fresh) --smp "$(or $(T),default)"

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

# The Debian packages (debian/) in $(BUILD)/deb, from a copy of the tracked
# files as they are now (git stash create: uncommitted changes too), since
# dpkg-buildpackage writes into the source's parent.  Nothing of this make
# (MAKEFLAGS, BUILD, KSRC) reaches the build: it is debian/rules' own.
.PHONY: deb
deb:
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	c=$$(git stash create) && git archive $${c:-HEAD} | tar -x -C $(BUILD)/deb/src
	cd $(BUILD)/deb/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u KSRC \
		dpkg-buildpackage -us -uc -b
