# darmok — build, test and demo.
#
# The two commands a person needs on a fresh Debian machine:
#   make demo   sets up, builds, and runs the example round trip
#   make test   sets up, builds, and runs the whole test suite (C and JS)
# Every target depends on what it needs; `make setup` is idempotent.

SHELL := /bin/bash
.DEFAULT_GOAL := build

BUILD := build

# Debian packages the build and the tests need. `make setup` installs the
# missing ones (as root, or through sudo when it is there).
DEB_PACKAGES := emscripten node-acorn gcc gcc-multilib clang libclang-rt-14-dev clang-format \
                protobuf-c-compiler protobuf-compiler make \
                apt debian-archive-keyring tar gzip \
                redis-server redis-tools chromium

# Debian's emcc 3.1.6 runs its JS tools under the machine's Node, which finds
# acorn only here.
EMCC := NODE_PATH=/usr/share/nodejs emcc

# Two stamps: the Debian packages (re-checked only when DEB_PACKAGES
# changes: $(DEB_LIST) is rewritten only then) and node_modules (npm ci
# again only when the lockfile changes). Editing the Makefile re-runs neither.
DEB_LIST := $(BUILD)/.deb-packages
DEB_STAMP := $(BUILD)/.setup-deb
NPM_STAMP := node_modules/.package-lock.json
RUNTIMES_STAMP := test/runtimes/node_modules/.package-lock.json
SETUP_STAMP := $(BUILD)/.setup
$(shell mkdir -p $(BUILD); [ "$$(cat $(DEB_LIST) 2>/dev/null)" = "$(DEB_PACKAGES)" ] || echo "$(DEB_PACKAGES)" > $(DEB_LIST))

# protobuf-c's runtime (Debian's source package, sha256-pinned) and the code
# protoc-c generates from proto/darmok.proto, all in $(BUILD): PB_CFLAGS,
# PB_HEADERS, $(call PB_OBJS,<variant>), PROTOBUF_C_LICENSE.
include proto/protobuf.mk

CORE_SRC := $(sort $(wildcard wasm/*.c))
ABI_JS := js/core/dk_abi.cjs
CORE_HDR := $(sort $(wildcard wasm/*.h))
# The functions JS calls: one name a line in wasm/exports.txt, the only list
# (wasm/gen_abi.cjs checks wasm/dk_wasm.c against it).
EXPORTS := $(shell sed -e 's/\#.*//' -e '/^[[:space:]]*$$/d' -e 's/^[[:space:]]*/_/' wasm/exports.txt 2>/dev/null | paste -sd, -)

WASM_FLAGS := -O3 -mbulk-memory -msimd128 -std=c11 -sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH=1 \
              -sINITIAL_MEMORY=1048576 -sTOTAL_STACK=262144 -sMALLOC=emmalloc \
              -sEXPORTED_FUNCTIONS=$(EXPORTS) -Wall -Wextra -Werror

# Native C: warnings as errors, sanitizers, and once as 32-bit (wasm32 has a
# 32-bit size_t).
NATIVE_WARN := -std=c11 -Wall -Wextra -Werror -Wconversion -Wshadow -Wno-unused-function
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
C_TESTS := $(patsubst test/c/%.c,%,$(sort $(wildcard test/c/*.c)))

.PHONY: build setup demo test test-c test-c32 test-c-wasm test-c-simd test-js test-js-24 test-runtimes runtime-table wasm clean distclean

build: $(BUILD)/darmok.wasm $(BUILD)/darmok-inline.cjs $(ABI_JS) $(PROTOBUF_C_LICENSE)

wasm: $(BUILD)/darmok.wasm

# --- setup -----------------------------------------------------------------

setup:
	@rm -f $(SETUP_STAMP) $(DEB_STAMP) $(NPM_STAMP) $(RUNTIMES_STAMP)
	@$(MAKE) --no-print-directory $(SETUP_STAMP)

$(DEB_STAMP): $(DEB_LIST)
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "setup: installing Debian packages:" $$missing; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null; then SUDO=sudo; else \
	    echo "setup: need root to install: $$missing (run 'make setup' as root)" >&2; exit 1; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing \
	    || { echo "setup: apt-get could not install: $$missing" >&2; exit 1; }; \
	fi
	@touch $@

# Node.js 20.19+ and npm come with the machine (Debian 12's nodejs is 18,
# under what package.json's engines, Vite and playwright-core need): say
# so plainly rather than fail inside npm.
$(NPM_STAMP): package.json package-lock.json | $(DEB_STAMP)
	@command -v npm >/dev/null || { echo "setup: npm not found: install Node.js 20.19 or later with its npm (e.g. from NodeSource)" >&2; exit 1; }
	@node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
	  || { echo "setup: Node.js $$(node --version) is too old: install Node.js 20.19 or later (e.g. from NodeSource)" >&2; exit 1; }
	npm ci --no-audit --no-fund
	@touch $@

# The runtimes of the runtime matrix (test-runtimes) and of test-js-24:
# Node 22, 24 and 26, Bun, Deno and workerd, each an npm package holding its
# binary, at the exact versions of test/runtimes/package-lock.json. A
# lockfile of their own keeps the main install lean (they are ~900 MB); none
# has an install script (--ignore-scripts: nothing is fetched from elsewhere).
$(RUNTIMES_STAMP): test/runtimes/package.json test/runtimes/package-lock.json | $(NPM_STAMP)
	cd test/runtimes && npm ci --no-audit --no-fund --ignore-scripts
	@touch $@

$(SETUP_STAMP): $(DEB_STAMP) $(NPM_STAMP) $(RUNTIMES_STAMP)
	@touch $@

# --- the WebAssembly core ----------------------------------------------------

$(BUILD)/darmok.wasm: $(CORE_SRC) $(CORE_HDR) wasm/exports.txt $(PB_HEADERS) $(call PB_OBJS,wasm) | $(SETUP_STAMP)
	@mkdir -p $(BUILD)
	$(EMCC) $(WASM_FLAGS) $(PB_CFLAGS) $(CORE_SRC) $(call PB_OBJS,wasm) -o $@

# darmok/inline's core (js/inline.cjs): the .wasm as base64 in a CommonJS
# module, so a bundle can carry it in its one file.
$(BUILD)/darmok-inline.cjs: $(BUILD)/darmok.wasm
	{ echo "// Made by make from build/darmok.wasm: the core as base64, for darmok/inline (js/inline.cjs)."; \
	  printf "module.exports = '"; base64 -w0 $<; echo "';"; } > $@.tmp && mv $@.tmp $@

# The constants js/ shares with the core (wasm/dk_abi.h), generated from the
# C headers that define them: js/ holds no copy to drift. Made inside js/
# (never committed) so that js/ alone is the whole JavaScript layer: a copy
# of it with darmok.wasm beside or inside it runs (js/core/load.cjs). The
# generator also fails when dk_wasm.c's EXPORT functions are not exactly
# the ones of exports.txt.
$(ABI_JS): wasm/gen_abi.cjs $(CORE_HDR) wasm/exports.txt wasm/dk_wasm.c
	node wasm/gen_abi.cjs wasm $@

# --- tests -----------------------------------------------------------------

test: test-format test-c test-c-simd test-c-wasm test-c32 test-js test-js-24 test-runtimes test-fuzz

# Native C unit tests under AddressSanitizer and UndefinedBehaviorSanitizer,
# with every arena allocation a malloc of its own (DK_ARENA_EXACT) and every
# output buffer exactly the room reserved (DK_BUF_EXACT), so an access past
# one is seen; the -m32 build, the fuzzers and the .wasm use the real bump
# arena and buffers that double.
$(BUILD)/c/%: test/c/%.c $(CORE_SRC) $(CORE_HDR) $(PB_HEADERS) $(wildcard test/c/*.h) $(call PB_OBJS,native) | $(SETUP_STAMP)
	@mkdir -p $(dir $@)
	gcc $(NATIVE_WARN) $(SAN) -DDK_ARENA_EXACT -DDK_BUF_EXACT -DDK_CHECK_PB_BOUND -g -O1 -Iwasm $(PB_CFLAGS) $< $(CORE_SRC) $(call PB_OBJS,native) -lm -o $@

# The C tests compiled by emcc to wasm32 and run under Node: the target
# itself (32-bit size_t, the real SIMD intrinsics), on every machine.
$(BUILD)/cwasm/%.js: test/c/%.c $(CORE_SRC) $(CORE_HDR) $(PB_HEADERS) $(wildcard test/c/*.h) $(call PB_OBJS,wasmtest) | $(SETUP_STAMP)
	@mkdir -p $(dir $@)
	$(EMCC) $(NATIVE_WARN) -O2 -mbulk-memory -msimd128 -DDK_CHECK_PB_BOUND -sALLOW_MEMORY_GROWTH=1 \
	  -sMAXIMUM_MEMORY=4GB -sTOTAL_STACK=8388608 -sEXIT_RUNTIME=1 -sNODERAWFS=1 -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0 \
	  -Iwasm $(PB_CFLAGS) $< $(CORE_SRC) $(call PB_OBJS,wasmtest) -lm -o $@

# Natively as 32-bit x86 too, where the kernel executes i386 binaries (many
# VM, container and WSL kernels do not): a probe decides, DK_M32=0 forces
# it off, DK_M32=1 forces it on.
$(BUILD)/c32/%: test/c/%.c $(CORE_SRC) $(CORE_HDR) $(PB_HEADERS) $(wildcard test/c/*.h) $(call PB_OBJS,native32) | $(SETUP_STAMP)
	@mkdir -p $(dir $@)
	gcc -m32 $(NATIVE_WARN) -DDK_CHECK_PB_BOUND -O2 -Iwasm $(PB_CFLAGS) $< $(CORE_SRC) $(call PB_OBJS,native32) -lm -o $@

# The same tests once more with the 16-byte paths the .wasm runs (the code
# under __wasm_simd128__), through test/c/simd/wasm_simd128.h: a scalar
# stand-in for the WebAssembly SIMD intrinsics, so ASan sees those paths too.
# Also with protobuf-c's allocations cut from 2 KiB blocks, as the .wasm
# cuts them (DK_PB_ALLOC_BLOCKS, dk_pb_common.c pb_pc_alloc): each block its own
# malloc here, so a read past a block and its slack is seen.
$(BUILD)/csimd/%: test/c/%.c $(CORE_SRC) $(CORE_HDR) $(PB_HEADERS) $(wildcard test/c/*.h test/c/simd/*.h) $(call PB_OBJS,native) | $(SETUP_STAMP)
	@mkdir -p $(dir $@)
	gcc $(NATIVE_WARN) $(SAN) -DDK_ARENA_EXACT -DDK_BUF_EXACT -DDK_PB_ALLOC_BLOCKS -DDK_CHECK_PB_BOUND -D__wasm_simd128__ -Itest/c/simd -g -O1 -Iwasm $(PB_CFLAGS) $< $(CORE_SRC) $(call PB_OBJS,native) -lm -o $@

test-c-simd: $(addprefix $(BUILD)/csimd/,$(C_TESTS))
	@set -e; for t in $^; do ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t; done

test-c: $(addprefix $(BUILD)/c/,$(C_TESTS))
	@set -e; for t in $^; do ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t; done

# Fails unless every program ran and reported its checks (none failed), and
# test_format says it ran as wasm32 (its size_t check is compiled only there).
test-c-wasm: $(addprefix $(BUILD)/cwasm/,$(addsuffix .js,$(C_TESTS)))
	@set -e; total=0; wasm32=0; for t in $^; do \
	  out=$$(node $$t) || { echo "$$out"; echo "test-c-wasm: $$t failed" >&2; exit 1; }; echo "$$out"; \
	  case "$$out" in *"running as wasm32"*) wasm32=1;; esac; \
	  n=$$(echo "$$out" | sed -n 's/.* \([0-9][0-9]*\) passed, 0 failed$$/\1/p' | tail -n1); \
	  [ -n "$$n" ] && [ "$$n" -gt 0 ] || { echo "test-c-wasm: $$t reported no checks" >&2; exit 1; }; \
	  total=$$((total + n)); done; \
	[ $$wasm32 = 1 ] || { echo "test-c-wasm: no program ran as wasm32" >&2; exit 1; }; \
	echo "test-c-wasm: $(words $^) programs, $$total checks passed in wasm32 (32-bit size_t) under Node"

# Prints "yes" when this kernel runs a 32-bit x86 binary; DK_M32 overrides.
M32_PROBE = $(if $(filter 0 1,$(DK_M32)),$(if $(filter 1,$(DK_M32)),yes,no),$(shell \
  d=$$(mktemp -d) && printf 'int main(void){return 0;}\n' > $$d/p.c && \
  gcc -m32 $$d/p.c -o $$d/p 2>/dev/null && $$d/p 2>/dev/null && echo yes; rm -rf $$d))

test-c32:
	@if [ "$(M32_PROBE)" = yes ]; then \
	  $(MAKE) --no-print-directory test-c32-run; \
	else \
	  echo "test-c32: skipped: this kernel does not execute 32-bit x86 binaries (the wasm32 run, test-c-wasm, covers 32-bit size_t)"; \
	fi

.PHONY: test-c32-run
test-c32-run: $(addprefix $(BUILD)/c32/,$(C_TESTS))
	@set -e; for t in $^; do $$t; done

# The test files by name: Node 21 and later take no folder, only files or globs.
JS_TESTS := $(sort $(wildcard test/js/*/*.test.cjs test/js/*/*.test.mjs))
JS_DEPS := $(BUILD)/darmok.wasm $(BUILD)/darmok-inline.cjs $(ABI_JS) $(PROTOBUF_C_LICENSE)

# The whole JS suite on the machine's Node.
test-js: $(JS_DEPS)
	node --test $(JS_TESTS)

# Again on Node 24, the LTS (test/runtimes); skipped, with the reason, when its
# binary does not execute on this kernel.
NODE24 := test/runtimes/node_modules/node24/bin/node
test-js-24: $(JS_DEPS) | $(RUNTIMES_STAMP)
	@if why=$$($(NODE24) --version 2>&1 >/dev/null); then \
	  echo "test-js-24: $$($(NODE24) --version)"; $(NODE24) --test $(JS_TESTS); \
	else echo "test-js-24: skipped: $(NODE24) does not run here: $$why"; fi

# The runtime matrix (test/runtimes/matrix.mjs): every runtime x feature, one
# line each; then the matrix itself, handed a broken core (the .wasm cut in
# half), must fail every feature that loads it.
test-runtimes: $(JS_DEPS) | $(RUNTIMES_STAMP)
	node test/runtimes/matrix.mjs
	@mkdir -p $(BUILD)/matrix
	head -c $$(( $$(stat -c %s $(BUILD)/darmok.wasm) / 2 )) $(BUILD)/darmok.wasm > $(BUILD)/matrix/broken.wasm
	node test/runtimes/matrix.mjs --expect-broken --wasm $(BUILD)/matrix/broken.wasm

# Rewrites the runtime x feature table of docs/ECOSYSTEM.md from the last
# full run of the matrix (which fails while the table is not that one).
runtime-table:
	node test/runtimes/table.mjs

# --- fuzzing ---------------------------------------------------------------
# One libFuzzer target per decoder: test/fuzz/fuzz_<name>.c (found by that
# name: a new target is one new file), seeded from the committed corpus
# test/fuzz/corpus/<name>/ (`make fuzz-corpus` regenerates it from the test
# fixtures), with test/fuzz/<name>.dict as its dictionary when present.
# Inputs libFuzzer finds go to $(BUILD)/fuzz/corpus/<name>/, never into the
# committed seeds; a crash is saved as $(BUILD)/fuzz/crash-<name>-<hash>
# and belongs in the C tests as a regression fixture.
#   make fuzz        every target for FUZZ_SECONDS (default 60) each
#   make test-fuzz   every target briefly (FUZZ_QUICK_SECONDS, default 5)
FUZZ_SECONDS ?= 60
FUZZ_QUICK_SECONDS ?= 5
FUZZ_TARGETS := $(patsubst test/fuzz/fuzz_%.c,%,$(sort $(wildcard test/fuzz/fuzz_*.c)))
# More sources or libraries a target needs (e.g. protobuf-c generated code).
FUZZ_EXTRA_SRC ?= $(call PB_OBJS,fuzz)
FUZZ_LIBS ?= -lm
# DK_BUF_EXACT: an output buffer is exactly the room reserved (dk_mem.c),
# so a store past a writer's reservation is past the allocation.
FUZZ_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Werror -DDK_CHECK_PB_BOUND -DDK_BUF_EXACT \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer
# Each target also as <name>-simd: built with the .wasm's 16-byte SIMD paths
# through the scalar stand-in test/c/simd/wasm_simd128.h (see test-c-simd),
# seeded and run like its twin.
FUZZ_RUNS := $(FUZZ_TARGETS) $(addsuffix -simd,$(FUZZ_TARGETS))
FUZZ_BINS := $(addprefix $(BUILD)/fuzz/,$(FUZZ_RUNS))

.PHONY: fuzz test-fuzz fuzz-build fuzz-corpus

$(BUILD)/fuzz/%-simd: test/fuzz/fuzz_%.c test/fuzz/fuzz_common.h test/c/simd/wasm_simd128.h $(CORE_SRC) $(CORE_HDR) $(PB_HEADERS) $(FUZZ_EXTRA_SRC) | $(SETUP_STAMP)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -D__wasm_simd128__ -Itest/c/simd -Iwasm -Itest/fuzz $(PB_CFLAGS) $< $(CORE_SRC) $(FUZZ_EXTRA_SRC) $(FUZZ_LIBS) -o $@

$(BUILD)/fuzz/%: test/fuzz/fuzz_%.c test/fuzz/fuzz_common.h $(CORE_SRC) $(CORE_HDR) $(PB_HEADERS) $(FUZZ_EXTRA_SRC) | $(SETUP_STAMP)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Iwasm -Itest/fuzz $(PB_CFLAGS) $< $(CORE_SRC) $(FUZZ_EXTRA_SRC) $(FUZZ_LIBS) -o $@

fuzz-build: $(FUZZ_BINS)

# $(1): seconds per target. Prints one line per target (runs, coverage);
# on a failure, the end of libFuzzer's log and the crash artifact's name.
define FUZZ_RUN
@set -e; for t in $(FUZZ_RUNS); do \
  base=$${t%-simd}; \
  mkdir -p $(BUILD)/fuzz/corpus/$$t test/fuzz/corpus/$$base; \
  dict=; if [ -f test/fuzz/$$base.dict ]; then dict=-dict=test/fuzz/$$base.dict; fi; \
  log=$(BUILD)/fuzz/$$t.log; \
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     $(BUILD)/fuzz/$$t -max_total_time=$(1) -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 $$dict -artifact_prefix=$(BUILD)/fuzz/crash-$$t- \
       $(BUILD)/fuzz/corpus/$$t test/fuzz/corpus/$$base >$$log 2>&1; then \
    echo "fuzz $$t: $$(sed -n 's/^stat::number_of_executed_units: *//p' $$log) runs in $(1) s," \
         "$$(grep -ao 'cov: [0-9]*' $$log | tail -1), no failure"; \
  else \
    tail -n 60 $$log; echo "fuzz $$t: FAILED (log: $$log)" >&2; exit 1; \
  fi; \
done
endef

# The printer of `darmok inspect` (JavaScript, over the .wasm): mutants of
# the seeds for $(1) seconds (test/fuzz/fuzz_cli_tree.cjs); `timeout`
# turns a hang into a failure.
FUZZ_JS = timeout $$(( $(1) + 60 )) node test/fuzz/fuzz_cli_tree.cjs $(1)

fuzz: $(FUZZ_BINS) $(BUILD)/darmok.wasm $(ABI_JS)
	$(call FUZZ_RUN,$(FUZZ_SECONDS))
	$(call FUZZ_JS,$(FUZZ_SECONDS))

test-fuzz: $(FUZZ_BINS) $(BUILD)/darmok.wasm $(ABI_JS)
	$(call FUZZ_RUN,$(FUZZ_QUICK_SECONDS))
	$(call FUZZ_JS,$(FUZZ_QUICK_SECONDS))

# Rewrites the committed seed corpora from the test fixtures.
fuzz-corpus: $(BUILD)/darmok.wasm $(ABI_JS)
	node test/fuzz/make_corpus.cjs

# --- demo ------------------------------------------------------------------

demo: $(BUILD)/darmok.wasm $(ABI_JS)
	node examples/demo.cjs

# Formats the C sources in place by .clang-format (Debian's clang-format 14);
# test-format fails, naming the lines, when one is not formatted so.
FORMAT_SRC := $(wildcard wasm/*.c wasm/*.h test/c/*.c test/c/*.h test/c/simd/*.h test/fuzz/*.c test/fuzz/*.h bench/*.c)
.PHONY: format test-format
format: | $(SETUP_STAMP)
	clang-format -i $(FORMAT_SRC)

test-format: | $(SETUP_STAMP)
	clang-format --dry-run -Werror $(FORMAT_SRC)

# Every folder and file the build makes, but the fetched protobuf-c source
# and the setup stamps (distclean removes those and node_modules too).
clean:
	rm -rf $(BUILD)/c $(BUILD)/c32 $(BUILD)/cwasm $(BUILD)/csimd $(BUILD)/fuzz $(BUILD)/pb \
	       $(BUILD)/gen $(BUILD)/darmok.wasm $(BUILD)/darmok-inline.cjs $(BUILD)/tmp $(BUILD)/matrix $(ABI_JS)

distclean:
	rm -rf $(BUILD) node_modules test/runtimes/node_modules

# --- benchmarks (never part of `make test`: timing stays out of tests) -------

.PHONY: bench bench-quick
bench: $(BUILD)/darmok.wasm $(ABI_JS)
	node bench/run.mjs

bench-quick: $(BUILD)/darmok.wasm $(ABI_JS)
	node bench/run.mjs --quick
