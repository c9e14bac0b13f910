# cky: plain Makefile. `make` builds build/cky; `make test` builds and runs the Criterion
# suite (GPU tests skip without a GPU); `make check-dev` runs the long full-dev checks.
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
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -MMD -MP -pthread -I$(CUDA)/include
ALL_CFLAGS  := $(BASE_CFLAGS) $(CFLAGS)
LDLIBS      := $(LDSAN) -pthread -lz -lm -ldl -llapacke -L$(CUDA)/lib64 -lnvrtc -Wl,-rpath,$(CUDA)/lib64

ifneq ($(V),1)
Q := @
endif

MODULES  := util grammar corpus_tools parser viterbi codegen kernels
LIB_SRC  := $(wildcard $(addsuffix /*.c,$(MODULES)))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard test/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all test test-gpu check-dev check-native debug clean fuzz

all: $(BUILD)/cky

$(BUILD)/cky: $(CLI_OBJ) $(BUILD)/libcky.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libcky.a $(LDLIBS)

$(BUILD)/libcky.a: $(LIB_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJ)

$(BUILD)/test/%.o: ALL_CFLAGS += -UNDEBUG -DCKY_SHARED='"$(SHARED)"' -DCKY_BUILD='"$(abspath $(BUILD))"'
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/cky_tests: $(TEST_OBJ) $(BUILD)/libcky.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libcky.a -lcriterion $(LDLIBS)

# The whole CPU suite; tests that need a GPU skip with a message.
test: $(BUILD)/cky $(BUILD)/cky_tests
	$(BUILD)/cky_tests -j2

# Long checks on the full dev set (minutes): scripts in tools/.
check-dev: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-dev

# Native .gr grammars against the Berkeley parser's lexicon and exhaustive output (long).
check-native: $(BUILD)/cky
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-lexicon
	SHARED=$(SHARED) CKY=$(abspath $(BUILD)/cky) bash tools/check-native

debug:
	$(MAKE) OPT="-O0 -g"

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# libFuzzer target over the native .gr reader (needs clang; fuzz/README says how to run it).
FUZZ_SRC := fuzz/fuzz_native.c $(wildcard util/*.c grammar/*.c)
fuzz: $(BUILD)/fuzz/fuzz_native
$(BUILD)/fuzz/fuzz_native: $(FUZZ_SRC) $(wildcard util/*.h grammar/*.h)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	$(Q)clang -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer \
	    -fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_SRC) -lz -lm -pthread
