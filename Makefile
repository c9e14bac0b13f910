# cky: plain Makefile. `make` builds build/cky; `make test` builds and runs the Criterion
# suite (GPU tests skip without a GPU); `make test-gpu` runs the GPU tests alone; `make check-dev` runs the long full-dev checks.
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
# The CUDA runtime is linked statically: it loads the driver (libcuda) only when asked, so
# cky starts and works on machines without a GPU or driver.
LDLIBS      := $(LDSAN) -pthread -lz -lm -ldl -llapacke -L$(CUDA)/lib64 -lnvrtc -lcudart_static \
               -lrt -lstdc++ -Wl,-rpath,$(CUDA)/lib64

# Hand-written device code (kernels/*.cu), built for Hopper (H100/H200).
NVCC      ?= $(CUDA)/bin/nvcc
CUDA_ARCH ?= sm_90
NVCCFLAGS := -arch=$(CUDA_ARCH) -O3 -std=c++17 -lineinfo -MMD -MP \
             -Xcompiler -Wall,-Wextra,-Wno-unused-parameter
ifeq ($(CI),true)
NVCCFLAGS += -Werror all-warnings -Xcompiler -Werror
endif

ifneq ($(V),1)
Q := @
endif

MODULES  := util grammar corpus_tools parser viterbi maxrule codegen kernels
LIB_SRC  := $(wildcard $(addsuffix /*.c,$(MODULES)))
CU_SRC   := $(wildcard kernels/*.cu)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.o)
CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard test/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all test test-gpu check-dev check-native check-maxrule check-maxrule-heldout debug clean fuzz

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

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	@echo "  NVCC    $<"
	$(Q)$(NVCC) $(NVCCFLAGS) -c -o $@ $<

$(BUILD)/cky_tests: $(TEST_OBJ) $(BUILD)/libcky.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libcky.a -lcriterion $(LDLIBS)

# The whole CPU suite; tests that need a GPU skip with a message.
test: $(BUILD)/cky $(BUILD)/cky_tests
	$(BUILD)/cky_tests -j2

# The GPU tests alone (suites named gpu_*), on a machine with a GPU; they skip without one.
test-gpu: $(BUILD)/cky $(BUILD)/cky_tests
	$(BUILD)/cky_tests --filter 'gpu_*/*' --verbose

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

# ---- check-cpu: the CPU generated path against the reference parser (long; tools/check-cpu).
# tools/src/check_engine.c is a standalone checker, outside LIB_SRC, CLI_SRC and TEST_SRC.
CHECK_ENGINE_OBJ := $(BUILD)/tools/src/check_engine.o
$(BUILD)/check_engine: $(CHECK_ENGINE_OBJ) $(BUILD)/libcky.a
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(CHECK_ENGINE_OBJ) $(BUILD)/libcky.a $(LDLIBS)

.PHONY: check-cpu
check-cpu: $(BUILD)/check_engine
	SHARED=$(SHARED) CHECK_ENGINE=$(abspath $(BUILD)/check_engine) bash tools/check-cpu

-include $(CHECK_ENGINE_OBJ:.o=.d)
