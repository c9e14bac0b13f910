# cky: plain Makefile. `make` builds build/cky and build/libcky.so (the shared library of the
# Python package); `make test` builds and runs the Criterion suite (GPU tests skip without a
# GPU), then the Python package's pytest tests; `make test-gpu` runs the GPU tests alone;
# `make check-dev` runs the long full-dev checks.
# Options: CFLAGS=... (added to the defaults), SANITIZER=address|undefined, V=1, CI=true
# (adds -Werror), SHARED=path to the shared data folder (default ../shared).

CC       ?= cc
CUDA     ?= /usr/local/cuda
SHARED   ?= $(abspath ../shared)
BUILD    ?= build

WARN     := -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Wno-sign-compare
ifeq ($(CI),true)
WARN     += -Werror
endif
OPT      := -O2 -g
ifdef SANITIZER
OPT      := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SANITIZER)
LDSAN    := -fsanitize=$(SANITIZER)
endif
# -fPIC: the same objects go into build/cky and the shared library build/libcky.so.
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -MMD -MP -pthread -fPIC -I$(CUDA)/include
ALL_CFLAGS  := $(BASE_CFLAGS) $(CFLAGS)
# The CUDA runtime is linked statically: it loads the driver (libcuda) only when asked, so
# cky starts and works on machines without a GPU or driver.
LDLIBS      := $(LDSAN) -pthread -lz -lm -ldl -llapacke -L$(CUDA)/lib64 -lnvrtc -lcudart_static \
               -lrt -lstdc++ -Wl,-rpath,$(CUDA)/lib64

# Hand-written device code (*.cu: gpu/ and the decoders' device parts), built for Hopper
# (H100/H200).
NVCC      ?= $(CUDA)/bin/nvcc
CUDA_ARCH ?= sm_90
NVCCFLAGS := -arch=$(CUDA_ARCH) -O3 -std=c++17 -lineinfo -MMD -MP \
             -Xcompiler -Wall,-Wextra,-Wno-unused-parameter,-fPIC
ifeq ($(CI),true)
NVCCFLAGS += -Werror all-warnings -Xcompiler -Werror
endif

ifneq ($(V),1)
Q := @
endif

# The library's folders, from the ground up (docs/engines.md: the layers).
MODULES  := util chart grammar corpus_tools codegen semiring sched prune engines/ref engines/cpu \
            gpu decoders decoders/viterbi decoders/maxrule decoders/pruned parser
LIB_SRC  := $(wildcard $(addsuffix /*.c,$(MODULES)))
CU_SRC   := $(wildcard $(addsuffix /*.cu,$(MODULES)))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.o)
CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
# The flat C API of libcky.so (api/cky.h), for bindings; the cky command does not use it.
API_SRC  := $(wildcard api/*.c)
API_OBJ  := $(API_SRC:%.c=$(BUILD)/%.o)
# The HTTP service of `cky serve` (serve/): linked into build/cky and the tests, not into
# libcky.so, so that the Python package needs neither libmicrohttpd nor jansson. Its page
# (serve/page/) is embedded as C source by tools/embed-files.
SERVE_SRC  := $(wildcard serve/*.c)
SERVE_PAGE := $(wildcard serve/page/*)
SERVE_OBJ  := $(SERVE_SRC:%.c=$(BUILD)/%.o) $(BUILD)/serve/page_data.o
SERVE_LIBS := $(shell pkg-config --libs libmicrohttpd jansson 2>/dev/null || \
                echo -lmicrohttpd -ljansson)
TEST_SRC := $(wildcard test/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all test test-gpu test-python bench-host check-dev check-native check-maxrule check-maxrule-heldout check-kbest debug clean fuzz

all: $(BUILD)/cky $(BUILD)/libcky.so

$(BUILD)/cky: $(CLI_OBJ) $(SERVE_OBJ) $(BUILD)/libcky.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(SERVE_OBJ) $(BUILD)/libcky.a $(LDLIBS) $(SERVE_LIBS)

$(BUILD)/serve/page_data.c: tools/embed-files $(SERVE_PAGE)
	@mkdir -p $(dir $@)
	@echo "  EMBED   $@"
	$(Q)sh tools/embed-files $(SERVE_PAGE) > $@.tmp && mv $@.tmp $@

$(BUILD)/serve/page_data.o: $(BUILD)/serve/page_data.c $(FLAGS_STAMP)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -Iserve -c -o $@ $<

$(BUILD)/libcky.a: $(LIB_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJ)

# The shared library of the Python package (python/): the library, the C API and the static
# CUDA runtime in one .so; it exports only the API's cky_* functions (api/cky.map).
$(BUILD)/libcky.so: $(API_OBJ) $(LIB_OBJ) api/cky.map
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -shared -Wl,--version-script=api/cky.map -Wl,-soname,libcky.so \
	    -o $@ $(API_OBJ) $(LIB_OBJ) $(LDLIBS)

# util/jmath.c repeats HotSpot's Math.log operation by operation: no fused multiply-add
# (-std=c11 already keeps GCC from contracting; clang's default would not).
$(BUILD)/util/jmath.o: ALL_CFLAGS += -ffp-contract=off
$(BUILD)/test/%.o: ALL_CFLAGS += -UNDEBUG -DCKY_SHARED='"$(SHARED)"' -DCKY_BUILD='"$(abspath $(BUILD))"' \
                                  -DCKY_SOURCE='"$(abspath .)"'
# Objects are rebuilt when the compiler flags change (-fPIC came with libcky.so): the stamp
# is rewritten only when they differ from the last build's.
FLAGS_STAMP := $(BUILD)/flags.stamp
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(BASE_CFLAGS) $(CFLAGS) | $(NVCCFLAGS)' | cmp -s - $@ || \
	    echo '$(BASE_CFLAGS) $(CFLAGS) | $(NVCCFLAGS)' > $@
.PHONY: FORCE

# The commit of the build, for cky --version (cli/version.c): its object is rebuilt when it
# changes ("-dirty": uncommitted changes; "unknown" outside a git checkout).
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
            git rev-parse --git-dir >/dev/null 2>&1 && { git diff --quiet HEAD -- 2>/dev/null || \
            echo -dirty; })
COMMIT_STAMP := $(BUILD)/commit.stamp
$(COMMIT_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(COMMIT)' | cmp -s - $@ || echo '$(COMMIT)' > $@
$(BUILD)/cli/version.o: $(COMMIT_STAMP)
$(BUILD)/cli/version.o: ALL_CFLAGS += -DCKY_COMMIT='"$(COMMIT)"'

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.cu $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  NVCC    $<"
	$(Q)$(NVCC) $(NVCCFLAGS) -c -o $@ $<

$(BUILD)/cky_tests: $(TEST_OBJ) $(API_OBJ) $(SERVE_OBJ) $(BUILD)/libcky.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(TEST_OBJ) $(API_OBJ) $(SERVE_OBJ) $(BUILD)/libcky.a \
	    -lcriterion $(LDLIBS) $(SERVE_LIBS)

# The include layers (tools/check-layers), the whole CPU suite (tests that need a GPU skip
# with a message), then the Python package's tests.
test: $(BUILD)/cky $(BUILD)/cky_tests
	bash tools/check-layers
	$(BUILD)/cky_tests -j2
	$(MAKE) --no-print-directory test-python

# Debian's Python (/usr/bin/python3) holds the apt packages (python3-pytest, python3-nltk,
# python3-matplotlib) even where another python3 comes first on PATH.
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)

# The Python package's tests (python/tests, pytest): they skip as a whole, with a message,
# only where pytest is not installed.
test-python: $(BUILD)/cky $(BUILD)/libcky.so
	@if $(PYTHON) -c 'import pytest' 2>/dev/null; then \
	    echo "SHARED=$(SHARED) $(PYTHON) -m pytest -q -rs python/tests"; \
	    SHARED=$(SHARED) $(PYTHON) -m pytest -q -rs -p no:cacheprovider python/tests; \
	else \
	    echo "test-python: SKIPPED: $(PYTHON) has no pytest (apt-get install python3-pytest)"; \
	fi

# The GPU tests alone (suites named gpu_*), on a machine with a GPU; they skip without one.
test-gpu: $(BUILD)/cky $(BUILD)/cky_tests
	$(BUILD)/cky_tests --filter 'gpu_*/*' --verbose

# Host-side figures (grammar load times, cpu and ref engine speed): reported, not asserted.
bench-host: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/bench-host

# Long checks on the full dev set (minutes): scripts in tools/.
check-dev: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-dev

# Native .gr grammars against the Berkeley parser's lexicon and exhaustive output (long).
check-native: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-lexicon
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-native

# The max-rule decoder against the Berkeley parser's unpruned max-rule output (long; GRAMMARS=
# and LIMIT= pick a subset), and against the jar itself on held-out sentences (JAR=, CLASSES=).
check-maxrule: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-maxrule

check-maxrule-heldout: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-maxrule-heldout

# --kbest 10 against the Berkeley parser's -kbest 10 files (the whole dev set, sample-sm5 and
# sample-sm3); JAR=.../BerkeleyParser-1.7.jar adds held-out sentences run with the jar here
# (LONG=1: long ones, some through the scaled passes).
check-kbest: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-kbest

# cky parse with the Berkeley parser's output options against the jar's own outputs on the
# whole dev set (tools/check-berkeley-cli; LIMIT=, ONLY= pick a subset).
.PHONY: check-berkeley-cli
check-berkeley-cli: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-berkeley-cli

debug:
	$(MAKE) OPT="-O0 -g"

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(API_OBJ:.o=.d) $(SERVE_OBJ:.o=.d)

# libFuzzer targets over the native .gr reader and the tokenizer (need clang; fuzz/README
# says how to run them).
FUZZ_SRC := fuzz/fuzz_native.c $(filter-out util/gpu_check.c,$(wildcard util/*.c grammar/*.c))
FUZZ_TOKENIZE_SRC := fuzz/fuzz_tokenize.c corpus_tools/tokenize.c util/utf8.c util/status.c
fuzz: $(BUILD)/fuzz/fuzz_native $(BUILD)/fuzz/fuzz_tokenize
$(BUILD)/fuzz/fuzz_tokenize: $(FUZZ_TOKENIZE_SRC) corpus_tools/tokenize.h util/utf8.h
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	$(Q)clang -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_TOKENIZE_SRC)
$(BUILD)/fuzz/fuzz_native: $(FUZZ_SRC) $(wildcard util/*.h grammar/*.h)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	$(Q)clang -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_SRC) -lz -lm -pthread

# ---- standalone tools (tools/src/NAME.c -> build/NAME), outside LIB_SRC, CLI_SRC and
# TEST_SRC, linked with the library: check_engine (check-cpu), tokenize_lines
# (check-tokenizer: the tokenizer alone), check_masks (check-prune), jlog_check (check-jlog).
TOOL_BIN := $(BUILD)/check_engine $(BUILD)/tokenize_lines $(BUILD)/check_masks \
            $(BUILD)/jlog_check
$(TOOL_BIN): $(BUILD)/%: $(BUILD)/tools/src/%.o $(BUILD)/libcky.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libcky.a $(LDLIBS)

-include $(TOOL_BIN:$(BUILD)/%=$(BUILD)/tools/src/%.d)

# ---- check-cpu: the CPU generated path against the reference parser (long; tools/check-cpu).
.PHONY: check-cpu
check-cpu: $(BUILD)/check_engine
	SHARED=$(SHARED) CHECK_ENGINE=$(abspath $(BUILD)/check_engine) bash tools/check-cpu

# ---- check-prune: the coarse-to-fine masks against the jar's, all twelve reference files
# (long; tools/check-prune; GRAMMARS=, MODES=, LIMIT= pick a subset).
.PHONY: check-prune
check-prune: $(BUILD)/check_masks
	SHARED=$(SHARED) CHECK_MASKS=$(abspath $(BUILD)/check_masks) bash tools/check-prune

# ---- check-jlog: util/jmath's Math.log against Java 17's on 10 million random doubles and
# every probability of the sample grammars' text files (about 10 s; tools/check-jlog;
# N= sets the count; Java 17 on x86_64).
.PHONY: check-jlog
check-jlog: $(BUILD)/jlog_check
	SHARED=$(SHARED) JLOG_CHECK=$(abspath $(BUILD)/jlog_check) bash tools/check-jlog

# ---- check-tokenizer: the tokenizer against the treebank's own tokens (seconds;
# tools/check-tokenizer, with python3-nltk from Debian for the detokenizer).
.PHONY: check-tokenizer
check-tokenizer: $(BUILD)/tokenize_lines
	SHARED=$(SHARED) TOKENIZE_LINES=$(abspath $(BUILD)/tokenize_lines) $(PYTHON) tools/check-tokenizer

# ---- check-serve: the load test of cky serve (tools/serve-load; minutes): 20,000 sentences
# from 64 concurrent clients in requests of 1-50, every reply against cky parse's output,
# throughput against cky parse's and p50 / p99 latency reported (MIN_RATIO=0.8 asserts the
# throughput ratio; SENTENCES=N, ENGINE=gpu, GRAMMAR=... for other runs).
# check-serve-fuzz: tools/serve-fuzz, 5 rounds of malformed requests and 10,000 connections
# opened and dropped; no crash, no leak, well-formed requests still answered.
.PHONY: check-serve check-serve-fuzz
SERVE_GRAMMAR = $(or $(GRAMMAR),$(SHARED)/grammars/sample-sm1/sample-sm1)
check-serve: $(BUILD)/cky
	SHARED=$(SHARED) $(PYTHON) tools/serve-load --cky $(BUILD)/cky -g $(SERVE_GRAMMAR) \
	    --engine $(or $(ENGINE),cpu) --sentences $(or $(SENTENCES),20000) --clients 64 \
	    --min-ratio $(or $(MIN_RATIO),0) --json $(BUILD)/serve-load.json

check-serve-fuzz: $(BUILD)/cky
	SHARED=$(SHARED) $(PYTHON) tools/serve-fuzz --cky $(BUILD)/cky -g $(SERVE_GRAMMAR) \
	    --rounds 5 --drops 10000
