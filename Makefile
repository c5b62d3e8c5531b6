# Makefile — `make stepNN` builds ./stepNN; `make all`, `make test`, `make clean`.
#
# Each step source is compiled twice and linked into one binary:
#   build/stepNN.gpu.o  nvcc, the real kernel (sm_100f for tcgen05 steps; sm_80/90/100 + PTX for step 00)
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

# Per-step GPU targets. tcgen05 code is built for sm_100f, the datacenter Blackwell family: one
# cubin that compute capability 10.0 (B200, GB200) and 10.3 (B300, GB300) devices both load. Its
# SASS is the same, instruction for instruction, as an sm_100a build's (docs/hardware_checks.md).
# Family targets need nvcc 12.9 or newer (nvcc-check below).
ARCH_TCGEN05 := -gencode arch=compute_100f,code=sm_100f
ARCH_step00  := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
                -gencode arch=compute_100,code=[sm_100,compute_100]
arch_of = $(if $(ARCH_$(1)),$(ARCH_$(1)),$(ARCH_TCGEN05))
# The code= targets of a -gencode list, e.g. "sm_80 sm_90 sm_100 compute_100": the harness names
# the one the driver loaded (TCG_GPU_CODE; common/harness/capability.cpp).
comma := ,
codes_of = $(subst $(comma), ,$(subst ],,$(subst [,,$(patsubst code=%,%,$(filter code=%,$(subst $(comma)code=, code=,$(1)))))))

# One clear line instead of a page of ptxas errors when nvcc is older than the family targets
# (sm_100f arrived in CUDA 12.9). An order-only prerequisite of every nvcc rule: it runs once
# per make, and rebuilds nothing.
NVCC_MIN_MAJOR := 12
NVCC_MIN_MINOR := 9
nvcc-check:
	@v=$$($(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -1); \
	  set -- $$v; \
	  if [ -z "$$v" ]; then echo "Makefile: cannot run '$(NVCC) --version'; the GPU build needs nvcc from CUDA $(NVCC_MIN_MAJOR).$(NVCC_MIN_MINOR) or newer" >&2; exit 1; fi; \
	  if [ $$1 -lt $(NVCC_MIN_MAJOR) ] || { [ $$1 -eq $(NVCC_MIN_MAJOR) ] && [ $$2 -lt $(NVCC_MIN_MINOR) ]; }; then \
	    echo "Makefile: nvcc $$1.$$2 is too old: the tcgen05 code builds for sm_100f (B200, GB200, B300, GB300), which needs CUDA $(NVCC_MIN_MAJOR).$(NVCC_MIN_MINOR) or newer" >&2; exit 1; fi

STEP_SRCS := $(sort $(wildcard steps/step[0-9][0-9]_*.cu))
step_name  = $(firstword $(subst _, ,$(notdir $(1))))
STEPS     := $(foreach s,$(STEP_SRCS),$(call step_name,$(s)))

# Every .cpp of common/ (tensor maps, trace files), common/harness/ (what runs a step) and
# common/sim/ (the emulator), one object each.
COMMON_OBJS := $(patsubst common/%.cpp,$(BUILD)/common/%.o,$(sort $(wildcard common/*.cpp))) \
               $(patsubst common/harness/%.cpp,$(BUILD)/harness/%.o,$(sort $(wildcard common/harness/*.cpp))) \
               $(patsubst common/sim/%.cpp,$(BUILD)/sim/%.o,$(sort $(wildcard common/sim/*.cpp)))

.PHONY: all test deps clean ptxas-report check-spills unit-tests emulator-tests break-it-tests list-steps common-objs link-libs gpu-check
.PHONY: probe-objs nvcc-check
.PHONY: bench predict predict-big plots readme bench-emulator
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

$(BUILD)/$(1).gpu.o: $(2) | $(BUILD) nvcc-check
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(call arch_of,$(1)) -DTCG_GPU_CODE='"$(call codes_of,$(call arch_of,$(1)))"' -MMD -MP -MF $(BUILD)/$(1).gpu.d -c $$< -o $$@ \
	  2> $(BUILD)/$(1).ptxas.log || { cat $(BUILD)/$(1).ptxas.log; exit 1; }
	@grep -v '^ptxas info' $(BUILD)/$(1).ptxas.log >&2 || true

$(BUILD)/$(1).sim.o: $(2) | $(BUILD)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -x c++ -MMD -MP -MF $(BUILD)/$(1).sim.d -c $$< -o $$@
endef
$(foreach s,$(STEP_SRCS),$(eval $(call STEP_RULES,$(call step_name,$(s)),$(s))))

list-steps:
	@echo $(STEPS)

# Builds the shared objects and prints their paths (tests/steps/break_it.sh links against them).
common-objs: $(COMMON_OBJS)
	@echo $(COMMON_OBJS)

# The libraries every binary links (tests/steps/break_it.sh links its modified steps with them).
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
# Every tests/<concern>/test_*.cpp (tests/README.md: unit/, emulator/) links into one doctest binary.
TEST_SRCS := $(sort $(wildcard tests/*/test_*.cpp)) tests/test_main.cpp
TEST_OBJS := $(patsubst tests/%.cpp,$(BUILD)/tests/%.o,$(TEST_SRCS))
# The tcgen05 hardware probes' emulator side and CPU expectations (tests/gpu/), also in unit_tests.
PROBE_CASE_OBJS := $(patsubst tests/gpu/%.cpp,$(BUILD)/tests/%.o,$(sort $(wildcard tests/gpu/probe_*.cpp)))
PROBE_SIM_OBJS := $(BUILD)/tests/tcgen05_check.sim.o $(PROBE_CASE_OBJS)

$(BUILD)/tests/unit/test_cutlass.o: tests/unit/test_cutlass.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -w $(if $(CUTLASS_INCLUDE),-I$(CUTLASS_INCLUDE) -I$(CUDA_HOME)/include/cccl,-DTCG_NO_CUTLASS) \
	  -MMD -MP -c $< -o $@

$(BUILD)/tests/%.o: tests/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -MMD -MP -c $< -o $@

# A test_*.cpp left at the top of tests/ would not be built: refuse rather than drop it silently.
STRAY_TESTS := $(filter-out tests/test_main.cpp,$(wildcard tests/test_*.cpp))
$(BUILD)/tests/unit_tests: $(TEST_OBJS) $(PROBE_SIM_OBJS) $(COMMON_OBJS)
	@[ -z "$(STRAY_TESTS)" ] || { echo "tests/: $(STRAY_TESTS): move into tests/<concern>/ (tests/README.md says which)"; exit 2; }
	$(CXX) -o $@ $^ $(LDLIBS)

unit-tests: $(BUILD)/tests/unit_tests
	$(BUILD)/tests/unit_tests

emulator-tests: $(STEPS)
	bash tests/steps/run_steps.sh $(STEPS)

break-it-tests: $(COMMON_OBJS)
	bash tests/steps/break_it.sh

# `make test` first installs what the tests need and the machine lacks (tests/install_deps.sh:
# doctest, the CUTLASS headers, cuobjdump/nvdisasm, matplotlib), or says in one line why it cannot.
deps:
	@bash tests/install_deps.sh

test: all
	@bash tests/install_deps.sh
	@bash tests/run_all.sh

# Hardware check of the emulator's TMA model (needs a GPU of compute capability >= 9.0; not part
# of `make test`): the same probe kernel on the GPU and in the emulator, byte for byte.
GPU_CHECK_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100f,code=sm_100f
$(BUILD)/tests/tma_check: tests/gpu/tma_check.cu $(COMMON_OBJS) | $(BUILD)/tests nvcc-check
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GPU_CHECK_ARCH) -DTCG_GPU_CODE='"$(call codes_of,$(GPU_CHECK_ARCH))"' -MMD -MF $@.gpu.d -MT $@ -c $< -o $@.gpu.o 2> $@.ptxas.log || { cat $@.ptxas.log; exit 1; }
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -MMD -MP -MF $@.sim.d -MT $@ -x c++ -c $< -o $@.sim.o
	$(CXX) -o $@ $@.gpu.o $@.sim.o $(COMMON_OBJS) $(LDLIBS)

# Tensor maps rewritten on the device (tests/gpu/tensormap_check.cu): tensormap.replace needs
# sm_90a on an H100/H200 (ptxas refuses it for sm_90).
TENSORMAP_CHECK_ARCH ?= -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100f,code=sm_100f
$(BUILD)/tests/tensormap_check: tests/gpu/tensormap_check.cu $(COMMON_OBJS) | $(BUILD)/tests nvcc-check
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(TENSORMAP_CHECK_ARCH) -DTCG_GPU_CODE='"$(call codes_of,$(TENSORMAP_CHECK_ARCH))"' -MMD -MF $@.gpu.d -MT $@ -c $< -o $@.gpu.o 2> $@.ptxas.log || { cat $@.ptxas.log; exit 1; }
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -MMD -MP -MF $@.sim.d -MT $@ -x c++ -c $< -o $@.sim.o
	$(CXX) -o $@ $@.gpu.o $@.sim.o $(COMMON_OBJS) $(LDLIBS)

# The tcgen05 probes (tests/gpu/tcgen05_check.cu, cases in probe_*.cpp): sm_100f (compute
# capability 10.0 and 10.3); on another GPU the program reports the families it skipped. Both
# programs append their rows to results/gpu_check_<gpu>.csv (gpu: b200, b300, h100, ...).
# Exit 1 if either found a mismatch, 3 if neither found a GPU.
PROBE_ARCH ?= -gencode arch=compute_100f,code=sm_100f
$(BUILD)/tests/probe_%.o: tests/gpu/probe_%.cpp | $(BUILD)/tests
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/tests/tcgen05_check.sim.o: tests/gpu/tcgen05_check.cu | $(BUILD)/tests
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -x c++ -MMD -MP -MF $(BUILD)/tests/tcgen05_check.sim.d -c $< -o $@
$(BUILD)/tests/tcgen05_check.gpu.o: tests/gpu/tcgen05_check.cu | $(BUILD)/tests nvcc-check
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(PROBE_ARCH) -DTCG_GPU_CODE='"$(call codes_of,$(PROBE_ARCH))"' -MMD -MP -MF $(BUILD)/tests/tcgen05_check.gpu.d -c $< -o $@ \
	  2> $(BUILD)/tests/tcgen05_check.ptxas.log || { cat $(BUILD)/tests/tcgen05_check.ptxas.log; exit 1; }
$(BUILD)/tests/tcgen05_check: $(BUILD)/tests/tcgen05_check.gpu.o $(PROBE_SIM_OBJS) $(COMMON_OBJS)
	$(CXX) -o $@ $^ $(LDLIBS)

# Builds the probe tests' objects and prints their paths (tests/gpu/break_probes.sh links with them).
probe-objs: $(PROBE_SIM_OBJS) $(BUILD)/tests/gpu/test_gpu_probes.o $(BUILD)/tests/test_main.o
	@echo $^

gpu-check: $(BUILD)/tests/tma_check $(BUILD)/tests/tcgen05_check $(BUILD)/tests/tensormap_check
	@a=0; b=0; c=0; $(BUILD)/tests/tma_check || a=$$?; $(BUILD)/tests/tcgen05_check || b=$$?; \
	  $(BUILD)/tests/tensormap_check || c=$$?; \
	  if [ $$a = 1 ] || [ $$b = 1 ] || [ $$c = 1 ]; then exit 1; elif [ $$a = 3 ] && [ $$b = 3 ] && [ $$c = 3 ]; then exit 3; \
	  elif [ $$a != 0 ] && [ $$a != 3 ]; then exit $$a; elif [ $$b != 0 ] && [ $$b != 3 ]; then exit $$b; \
	  elif [ $$c != 0 ] && [ $$c != 3 ]; then exit $$c; fi

# The timing model's microbenchmarks (tests/gpu/micro.cu; docs/timing_model.md): on a GPU of
# compute capability >= 9.0 they append rows to results/micro_<gpu>.csv; `micro --sim
# [--model-params FILE]` runs the same kernels in the timing model. CALIBRATE_ARGS e.g. --only ring
.PHONY: calibrate
$(BUILD)/tests/micro: tests/gpu/micro.cu tests/gpu/micro_cases.h $(COMMON_OBJS) | $(BUILD)/tests nvcc-check
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GPU_CHECK_ARCH) -DTCG_GPU_CODE='"$(call codes_of,$(GPU_CHECK_ARCH))"' -MMD -MF $@.gpu.d -MT $@ -c $< -o $@.gpu.o 2> $@.ptxas.log || { cat $@.ptxas.log; exit 1; }
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -Wno-psabi -DTCG_SIM -MMD -MP -MF $@.sim.d -MT $@ -x c++ -c $< -o $@.sim.o
	$(CXX) -o $@ $@.gpu.o $@.sim.o $(COMMON_OBJS) $(LDLIBS)

# What a published competition time holds beyond the kernel (tests/gpu/call_floor.cu, .py;
# docs/timing_model.md "Held against measured NVFP4 kernels"): on a GPU, prints the floors.
.PHONY: call-floor
$(BUILD)/tests/call_floor: tests/gpu/call_floor.cu | $(BUILD)/tests nvcc-check
	$(NVCC) $(CPPFLAGS) -std=c++17 -O3 $(GPU_CHECK_ARCH) $< -o $@
call-floor: $(BUILD)/tests/call_floor
	$(BUILD)/tests/call_floor && python3 tests/gpu/call_floor.py

# After the run, tests/gpu/fit_params.py fits the model's parameters from the new rows:
# results/micro_<gpu>.csv -> results/params_fit_<gpu>.txt (`--model-params FILE` reads it).
calibrate: $(BUILD)/tests/micro
	$(BUILD)/tests/micro $(CALIBRATE_ARGS) > $(BUILD)/calibrate.log; rc=$$?; cat $(BUILD)/calibrate.log; [ $$rc = 0 ] || exit $$rc; \
	csv=$$(sed -n 's/.*appending to //p' $(BUILD)/calibrate.log); [ -n "$$csv" ] || exit 1; \
	out=$$(dirname $$csv)/$$(basename $$csv .csv | sed 's/^micro_/params_fit_/').txt; \
	python3 tests/gpu/fit_params.py $$csv > $$out && echo "calibrate: wrote $$out"

# What of the L2 a streamed working set keeps (tests/gpu/l2_sweep.cu; docs/timing_model.md, "L2
# capacity"): on a GPU of compute capability >= 9.0, rows to results/micro_<gpu>_l2.csv.
.PHONY: l2-sweep
$(BUILD)/tests/l2_sweep: tests/gpu/l2_sweep.cu $(COMMON_OBJS) | $(BUILD)/tests nvcc-check
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GPU_CHECK_ARCH) -MMD -MF $@.d -MT $@ -c $< -o $@.o 2> $@.ptxas.log || { cat $@.ptxas.log; exit 1; }
	$(CXX) -o $@ $@.o $(COMMON_OBJS) $(LDLIBS)
l2-sweep: $(BUILD)/tests/l2_sweep
	$(BUILD)/tests/l2_sweep

# ------------------------------------------------------------------ results, model, charts
# bench:   on a GPU: every step it can run, standard shapes, rows appended to results/<gpu>.csv
#          (plots/bench.sh builds first; BENCH_ARGS e.g. --steps "00 07" or --iters 50)
# predict: no GPU needed: the emulator's B200 timing model for steps 01-15, rewrites
#          results/model_b200.csv, then docs/performance.md (plots/predict.sh; PREDICT_JOBS=N
#          runs at once, default the CPU count)
# predict-big: the model's sweeps too slow for make predict (step 14's levers at 4096^3 with the
#          noise and at 8192^3, about 11 CPU minutes) into results/model_b200_sweeps.csv; then
#          make docs-quotes
# plots:   the charts from the committed CSVs (+ model traces when the binaries can make them):
#          docs/img/progression*.png, docs/img/timeline_stepNN.png; PLOTS_OUT=DIR writes elsewhere
PLOTS_OUT ?= docs/img
bench:
	@bash plots/bench.sh $(BENCH_ARGS)

# bench-emulator: what the emulator itself costs (no GPU needed): CPU seconds and peak memory of
#          fixed commands (--predict of BF16 and NVFP4 steps at full shapes, a default --sim run, a
#          Break it case) and of the quick set that `make test` checks, rows appended to
#          results/emulator_bench.csv with the revision and the machine class
#          (tests/steps/bench_emulator.py; BENCH_EMULATOR_ARGS e.g. --set quick)
bench-emulator: all
	@python3 tests/steps/bench_emulator.py --record $(BENCH_EMULATOR_ARGS)

predict: all
	@bash plots/predict.sh $(PREDICT_ARGS)

predict-big: all
	@bash plots/predict_sweeps.sh --only bf16-levers

plots: all
	@bash plots/make_plots.sh --out $(PLOTS_OUT) $(PLOTS_ARGS)

# docs-quotes: reruns every output, diff and table the pages quote and updates the line numbers
#          they cite (tests/checks/docs_quotes.py; tests/README.md, "Quoted outputs"); make test
#          fails while a page differs. Run it after changing a step and after every merge.
.PHONY: docs-quotes
docs-quotes: all $(COMMON_OBJS)
	@python3 tests/checks/docs_quotes.py --write

# readme:  the README's table of measured results from the newest rows of results/<gpu>.csv
readme:
	@python3 plots/readme_results.py --write

clean:
	rm -rf $(BUILD) $(STEPS)

-include $(wildcard $(BUILD)/*.d $(BUILD)/*/*.d $(BUILD)/tests/*/*.d)
