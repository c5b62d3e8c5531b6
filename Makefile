# Makefile — `make stepNN` builds ./stepNN; `make all`, `make test`, `make clean`.
#
# Each step source is compiled twice and linked into one binary:
#   build/stepNN.gpu.o  nvcc, the real kernel (sm_100a for tcgen05 steps; sm_80/90/100 + PTX for step 00)
#   build/stepNN.sim.o  g++ -DTCG_SIM, the same source for the CPU emulator (common/sim/)
# The harness picks one at run time. ptxas' register/spill report for each kernel is kept in
# build/stepNN.ptxas.log; `make ptxas-report` prints them all.

NVCC      ?= nvcc
CXX       ?= g++
CUDA_HOME ?= $(patsubst %/bin/,%,$(dir $(shell command -v $(NVCC))))
BUILD     := build

GIT_REV := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

CPPFLAGS  := -I. -I$(CUDA_HOME)/include -DTCG_GIT_REV='"$(GIT_REV)"'
CXXFLAGS  ?= -std=c++17 -O2 -g -Wall -Wextra
NVCCFLAGS ?= -std=c++17 -O3 -lineinfo -Xcompiler=-Wall -Xptxas=-v,-warn-spills
LDLIBS    := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas -lcublasLt -lpthread

# Per-step GPU targets. tcgen05 code only exists for sm_100a (compute capability 10.0).
ARCH_TCGEN05 := -gencode arch=compute_100a,code=sm_100a
ARCH_step00  := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
                -gencode arch=compute_100,code=[sm_100,compute_100]
arch_of = $(if $(ARCH_$(1)),$(ARCH_$(1)),$(ARCH_TCGEN05))

STEP_SRCS := $(sort $(wildcard steps/step[0-9][0-9]_*.cu))
step_name  = $(firstword $(subst _, ,$(notdir $(1))))
STEPS     := $(foreach s,$(STEP_SRCS),$(call step_name,$(s)))

# Every .cpp of common/ (tensor maps, trace files), common/harness/ (what runs a step) and
# common/sim/ (the emulator), one object each.
COMMON_OBJS := $(patsubst common/%.cpp,$(BUILD)/common/%.o,$(sort $(wildcard common/*.cpp))) \
               $(patsubst common/harness/%.cpp,$(BUILD)/harness/%.o,$(sort $(wildcard common/harness/*.cpp))) \
               $(patsubst common/sim/%.cpp,$(BUILD)/sim/%.o,$(sort $(wildcard common/sim/*.cpp)))

.PHONY: all test deps clean ptxas-report check-spills unit-tests emulator-tests break-it-tests list-steps common-objs link-libs gpu-check
.PHONY: bench predict plots readme
all: $(STEPS)

$(BUILD) $(BUILD)/common $(BUILD)/harness $(BUILD)/sim $(BUILD)/tests:
	@mkdir -p $@

$(BUILD)/common/%.o: common/%.cpp | $(BUILD)/common
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/harness/%.o: common/harness/%.cpp | $(BUILD)/harness
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/sim/%.o: common/sim/%.cpp | $(BUILD)/sim
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

# The objects that print TCG_GIT_REV are rebuilt when the revision changes (CSV rows and traces
# name the revision that built them): the stamp file is rewritten only when its content differs.
$(BUILD)/git_rev.stamp: FORCE | $(BUILD)
	@echo '$(GIT_REV)' | cmp -s - $@ || echo '$(GIT_REV)' > $@
$(BUILD)/harness/output.o $(BUILD)/harness/traces.o: $(BUILD)/git_rev.stamp
.PHONY: FORCE
FORCE:

# $(1) = stepNN, $(2) = source
define STEP_RULES
$(1): $(BUILD)/$(1).gpu.o $(BUILD)/$(1).sim.o $(COMMON_OBJS)
	$(CXX) -o $$@ $$^ $(LDLIBS)

$(BUILD)/$(1).gpu.o: $(2) | $(BUILD)
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(call arch_of,$(1)) -MMD -MP -MF $(BUILD)/$(1).gpu.d -c $$< -o $$@ \
	  2> $(BUILD)/$(1).ptxas.log || { cat $(BUILD)/$(1).ptxas.log; exit 1; }
	@grep -v '^ptxas info' $(BUILD)/$(1).ptxas.log >&2 || true

$(BUILD)/$(1).sim.o: $(2) | $(BUILD)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -x c++ -MMD -MP -MF $(BUILD)/$(1).sim.d -c $$< -o $$@
endef
$(foreach s,$(STEP_SRCS),$(eval $(call STEP_RULES,$(call step_name,$(s)),$(s))))

list-steps:
	@echo $(STEPS)

# Builds the shared objects and prints their paths (tests/break_it.sh links against them).
common-objs: $(COMMON_OBJS)
	@echo $(COMMON_OBJS)

# The libraries every binary links (tests/break_it.sh links its modified steps with them).
link-libs:
	@echo $(LDLIBS)

ptxas-report: $(STEPS)
	@for s in $(STEPS); do echo "== $$s"; grep -E 'Compiling entry|Used|spill' $(BUILD)/$$s.ptxas.log; done

# Fails when ptxas reports any spill store or load for any kernel of any step.
check-spills: $(STEPS)
	@bad=0; for s in $(STEPS); do \
	  if grep -E '[1-9][0-9]* bytes spill (stores|loads)' $(BUILD)/$$s.ptxas.log >/dev/null; then \
	    echo "register spills in $$s:"; grep -B2 -E '[1-9][0-9]* bytes spill' $(BUILD)/$$s.ptxas.log; bad=1; fi; \
	done; \
	if [ $$bad = 0 ]; then echo "check-spills: no register spills in $(STEPS)"; fi; exit $$bad

# ------------------------------------------------------------------ tests
# CUTLASS headers for the encoder cross-check (pip install nvidia-cutlass==4.2.0.0).
CUTLASS_INCLUDE ?= $(shell python3 -c "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source', 'include'))" 2>/dev/null)
TEST_SRCS := $(sort $(wildcard tests/test_*.cpp))
TEST_OBJS := $(patsubst tests/%.cpp,$(BUILD)/tests/%.o,$(TEST_SRCS))

$(BUILD)/tests/test_cutlass.o: tests/test_cutlass.cpp | $(BUILD)/tests
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -w $(if $(CUTLASS_INCLUDE),-I$(CUTLASS_INCLUDE) -I$(CUDA_HOME)/include/cccl,-DTCG_NO_CUTLASS) \
	  -MMD -MP -c $< -o $@

$(BUILD)/tests/%.o: tests/%.cpp | $(BUILD)/tests
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -MMD -MP -c $< -o $@

$(BUILD)/tests/unit_tests: $(TEST_OBJS) $(COMMON_OBJS)
	$(CXX) -o $@ $^ $(LDLIBS)

unit-tests: $(BUILD)/tests/unit_tests
	$(BUILD)/tests/unit_tests

emulator-tests: $(STEPS)
	bash tests/run_steps.sh $(STEPS)

break-it-tests: $(COMMON_OBJS)
	bash tests/break_it.sh

# `make test` first installs what the tests need and the machine lacks (tests/install_deps.sh:
# doctest, the CUTLASS headers, cuobjdump/nvdisasm, matplotlib), or says in one line why it cannot.
deps:
	@bash tests/install_deps.sh

test: all
	@bash tests/install_deps.sh
	@bash tests/run_all.sh

# Hardware check of the emulator's TMA model (needs a GPU of compute capability >= 9.0; not part
# of `make test`): the same probe kernel on the GPU and in the emulator, byte for byte.
GPU_CHECK_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100a,code=sm_100a
$(BUILD)/tests/tma_check: tests/gpu/tma_check.cu $(COMMON_OBJS) | $(BUILD)/tests
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GPU_CHECK_ARCH) -c $< -o $@.gpu.o 2> $@.ptxas.log || { cat $@.ptxas.log; exit 1; }
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -x c++ -c $< -o $@.sim.o
	$(CXX) -o $@ $@.gpu.o $@.sim.o $(COMMON_OBJS) $(LDLIBS)

gpu-check: $(BUILD)/tests/tma_check
	$(BUILD)/tests/tma_check

# ------------------------------------------------------------------ results, model, charts
# bench:   on a GPU: every step it can run, standard shapes, rows appended to results/<gpu>.csv
#          (plots/bench.sh builds first; BENCH_ARGS e.g. --steps "00 07" or --iters 50)
# predict: no GPU needed: the emulator's B200 timing model for steps 01-07, rewrites
#          results/model_b200.csv, then docs/performance.md (plots/predict.sh)
# plots:   the charts from the committed CSVs (+ model traces when the binaries can make them):
#          docs/img/progression*.png, docs/img/timeline_stepNN.png; PLOTS_OUT=DIR writes elsewhere
PLOTS_OUT ?= docs/img
bench:
	@bash plots/bench.sh $(BENCH_ARGS)

predict: all
	@bash plots/predict.sh $(PREDICT_ARGS)

plots: all
	@bash plots/make_plots.sh --out $(PLOTS_OUT) $(PLOTS_ARGS)

# readme:  the README's table of measured results from the newest rows of results/<gpu>.csv
readme:
	@python3 plots/readme_results.py --write

clean:
	rm -rf $(BUILD) $(STEPS)

-include $(wildcard $(BUILD)/*.d $(BUILD)/*/*.d)
