// ptx/build.h — what every common/ptx/*.cuh wrapper file needs: the per-build namespaces and
// the wrapper macros (TCG_DEV, TCG_LOC, TCG_AT, TCG_PASS). Included through common/ptx.cuh.
#pragma once
#include <cstdint>

#include "../descriptors.h"

// The two builds of a kernel are linked into one binary, so everything a header defines for
// them lives in a per-build inline namespace: tcg::gpu_build or tcg::sim_build. The spelling
// stays tcg::name, but the linker symbols differ, so a function whose body depends on TCG_SIM
// can never be merged with the other build's copy (an ODR violation that would otherwise show
// up only when the optimizer does not inline it).
#if defined(TCG_SIM)
#define TCG_BUILD_NS sim
#define TCG_ABI_NS sim_build
#else
#define TCG_BUILD_NS gpu
#define TCG_ABI_NS gpu_build
#endif

#if defined(TCG_SIM)
#include "../sim/sim.h"
#define TCG_DEV inline
#define TCG_LOC0 const char* tcg_file = __builtin_FILE(), int tcg_line = __builtin_LINE()
#define TCG_LOC , TCG_LOC0
#define TCG_AT ::tcsim::SrcLoc{tcg_file, tcg_line}
#define TCG_PASS , tcg_file, tcg_line  // hands the caller's location on to another wrapper
#else
#include <cuda.h>  // CUtensorMap
#define TCG_DEV __device__ __forceinline__
#define TCG_LOC0
#define TCG_LOC
#define TCG_PASS
#endif
