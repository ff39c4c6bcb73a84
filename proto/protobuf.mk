# proto/protobuf.mk - the protobuf half of the build: protobuf-c's runtime
# source and the C code generated from proto/darmok.proto. Included by the
# Makefile after BUILD is set. Everything lands in $(BUILD); nothing of
# protobuf-c ever goes into the repository.
#
#   $(BUILD)/protobuf-c/protobuf-c.c, .h   protobuf-c's runtime, unpacked
#                                          from Debian's source package
#   $(BUILD)/protobuf-c/LICENSE            its BSD-2-Clause notice, shipped
#                                          in the npm package (the .wasm
#                                          contains protobuf-c)
#   $(BUILD)/gen/darmok.pb-c.c, .h         protoc-c's output for darmok.proto
#   $(BUILD)/pb/<variant>/*.o              both compiled per build variant
#                                          (wasm, native, native32, fuzz)
#
# darmok's own files include darmok.pb-c.h: compile them with $(PB_CFLAGS)
# (the generated header includes <protobuf-c/protobuf-c.h>) and link
# $(call PB_OBJS,<variant>).
#
# Why Debian's source package: protoc-c on the build machine is Debian's
# protobuf-c-compiler 1.4.1, and generated code must match the runtime it
# links against. Debian's package is the same upstream tarball
# (protobuf-c_1.4.1.orig.tar.gz, no Debian patches touch protobuf-c/), signed
# through the archive's Release file; we pin its sha256 as well, so a mirror
# or a later upload cannot change what we compile.
#
# The fetch uses an apt configuration of its own in a temporary folder (its
# own sources.list with one deb-src line, its own lists and cache), so the
# machine's apt setup and state are neither read for sources nor changed.
# Offline? Put the tarball at $(PROTOBUF_C_TARBALL) by hand; the checksum is
# still verified.

PROTOBUF_C_VERSION     := 1.4.1
PROTOBUF_C_DEB_VERSION := 1.4.1-1
PROTOBUF_C_SHA256      := 4cc4facd508172f3e0a4d3a8736225d472418aee35b4ad053384b137b220339f
# The deb-src line is made from this machine's own apt configuration: the
# first Debian archive URI it already uses (deb822 .sources files, then the
# classic sources.list) and the release codename from /etc/os-release, so
# the fetch goes to whatever mirror the machine is set up with.
# PROTOBUF_C_APT_SOURCE=... overrides it.
PROTOBUF_C_APT_SOURCE ?= $(shell \
  uri=$$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n' | grep -v -- '-security' | grep -m1 '://'); \
  [ -n "$$uri" ] || uri=$$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*:\/\/[^[:space:]]*\).*/\2/p' /etc/apt/sources.list 2>/dev/null | grep -v -- '-security' | head -n1); \
  suite=$$(. /etc/os-release 2>/dev/null && echo "$$VERSION_CODENAME"); \
  [ -n "$$uri" ] && [ -n "$$suite" ] && \
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $$uri $$suite main")

PROTOBUF_C_TARBALL := $(BUILD)/protobuf-c/protobuf-c_$(PROTOBUF_C_VERSION).orig.tar.gz
PROTOBUF_C_SRC     := $(BUILD)/protobuf-c/protobuf-c.c
PROTOBUF_C_HDR     := $(BUILD)/protobuf-c/protobuf-c.h
PROTOBUF_C_LICENSE := $(BUILD)/protobuf-c/LICENSE

DARMOK_PROTO ?= proto/darmok.proto
PROTOC_C     ?= protoc-c
PB_GEN_SRC   := $(BUILD)/gen/darmok.pb-c.c
PB_GEN_HDR   := $(BUILD)/gen/darmok.pb-c.h

# Include paths for anything that includes darmok.pb-c.h or protobuf-c.h.
PB_CFLAGS := -I$(BUILD) -I$(BUILD)/gen
# protobuf-c.c and generated code are not ours: compile them without
# -Werror -Wconversion (protobuf-c.c mixes size_t/unsigned freely).
PB_THIRD_PARTY_CFLAGS := -std=c11 -w $(PB_CFLAGS)

# Fetch: a temporary apt root, one deb-src line, `apt-get update` into it,
# `apt-get source --download-only` the exact Debian version, check the
# pinned sha256, keep only the upstream tarball.
$(PROTOBUF_C_TARBALL):
	@mkdir -p $(dir $@)
	@[ -n '$(PROTOBUF_C_APT_SOURCE)' ] || { echo "protobuf-c: no Debian archive found in /etc/apt; set PROTOBUF_C_APT_SOURCE='deb-src [signed-by=...] URI SUITE main'" >&2; exit 1; }
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	mkdir -p "$$tmp/etc/sources.list.d" "$$tmp/etc/preferences.d" \
	         "$$tmp/lists/partial" "$$tmp/cache/archives/partial" "$$tmp/dl"; \
	echo '$(PROTOBUF_C_APT_SOURCE)' > "$$tmp/etc/sources.list"; \
	apt_opts="-o Dir::Etc::sourcelist=$$tmp/etc/sources.list \
	          -o Dir::Etc::sourceparts=$$tmp/etc/sources.list.d \
	          -o Dir::Etc::preferencesparts=$$tmp/etc/preferences.d \
	          -o Dir::State::Lists=$$tmp/lists -o Dir::Cache=$$tmp/cache \
	          -o APT::Sandbox::User=$$(id -un) -o Debug::NoLocking=1"; \
	echo "protobuf-c: fetching Debian source $(PROTOBUF_C_DEB_VERSION)"; \
	apt-get -qq $$apt_opts update; \
	(cd "$$tmp/dl" && apt-get -qq $$apt_opts source --download-only \
	    protobuf-c=$(PROTOBUF_C_DEB_VERSION) >/dev/null); \
	mv "$$tmp/dl/$(notdir $@)" $@.part
	@echo "$(PROTOBUF_C_SHA256)  $@.part" | sha256sum -c --quiet - \
	  || { echo "protobuf-c: sha256 mismatch for $(notdir $@)" >&2; rm -f $@.part; exit 1; }
	@mv $@.part $@

# Unpack only the runtime and its license. -m: stamp the files now, so they
# are newer than the tarball and make does not unpack again.
$(PROTOBUF_C_SRC) $(PROTOBUF_C_HDR) $(PROTOBUF_C_LICENSE) &: $(PROTOBUF_C_TARBALL)
	@echo "$(PROTOBUF_C_SHA256)  $<" | sha256sum -c --quiet - \
	  || { echo "protobuf-c: sha256 mismatch for $<" >&2; exit 1; }
	tar -xzmf $< --no-same-owner -C $(dir $@) --strip-components=2 \
	    protobuf-c-$(PROTOBUF_C_VERSION)/protobuf-c/protobuf-c.c \
	    protobuf-c-$(PROTOBUF_C_VERSION)/protobuf-c/protobuf-c.h
	tar -xzmf $< --no-same-owner -C $(dir $@) --strip-components=1 \
	    protobuf-c-$(PROTOBUF_C_VERSION)/LICENSE

# Generated code. protoc-c names its output after the .proto's path relative
# to -I, hence -I on the proto's own folder.
$(PB_GEN_SRC) $(PB_GEN_HDR) &: $(DARMOK_PROTO) | $(SETUP_STAMP)
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) -I$(dir $(DARMOK_PROTO)) --c_out=$(BUILD)/gen $(DARMOK_PROTO)

# What darmok's own sources need before they compile.
PB_HEADERS := $(PB_GEN_HDR) $(PROTOBUF_C_HDR)

# The two third-party objects of one build variant.
PB_OBJS = $(BUILD)/pb/$(1)/protobuf-c.o $(BUILD)/pb/$(1)/darmok.pb-c.o

# $(call PB_VARIANT,variant,compiler,flags-variable): rules for its objects.
# -DNDEBUG only for the shipped .wasm; the tests keep protobuf-c's asserts.
define PB_VARIANT
$(BUILD)/pb/$(1)/protobuf-c.o: $(PROTOBUF_C_SRC) $(PROTOBUF_C_HDR)
	@mkdir -p $$(dir $$@)
	$(2) $$($(3)) $$(PB_THIRD_PARTY_CFLAGS) -c $$< -o $$@
$(BUILD)/pb/$(1)/darmok.pb-c.o: $(PB_GEN_SRC) $(PB_GEN_HDR) $(PROTOBUF_C_HDR)
	@mkdir -p $$(dir $$@)
	$(2) $$($(3)) $$(PB_THIRD_PARTY_CFLAGS) -c $$< -o $$@
endef
PB_FLAGS_wasm     := -O3 -mbulk-memory -DNDEBUG
PB_FLAGS_native   := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
PB_FLAGS_native32 := -m32 -O2
PB_FLAGS_wasmtest := -O2 -mbulk-memory
PB_FLAGS_fuzz     := -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(eval $(call PB_VARIANT,wasm,$(EMCC),PB_FLAGS_wasm))
$(eval $(call PB_VARIANT,native,gcc,PB_FLAGS_native))
$(eval $(call PB_VARIANT,native32,gcc,PB_FLAGS_native32))
$(eval $(call PB_VARIANT,wasmtest,$(EMCC),PB_FLAGS_wasmtest))
$(eval $(call PB_VARIANT,fuzz,clang,PB_FLAGS_fuzz))

.PHONY: protobuf-c-sources
protobuf-c-sources: $(PROTOBUF_C_SRC) $(PROTOBUF_C_HDR) $(PROTOBUF_C_LICENSE) $(PB_GEN_SRC) $(PB_GEN_HDR)
