// ptx.cuh — every inline-PTX instruction the steps use, one small wrapper each.
//
// Each wrapper has two bodies: the PTX string for nvcc, and (under TCG_SIM, the g++ build) a
// call into the emulator, common/sim/, which implements the instruction with the semantics the
// PTX ISA gives. Kernels call only these wrappers and contain no asm of their own, so the same
// kernel source runs on a B200 and in the emulator.
//
// In the emulator build every wrapper also receives the caller's file and line (hidden default
// arguments, TCG_LOC), so a diagnostic such as a deadlock report names the kernel line that
// waits, not this file.
//
// Section numbers are those of the PTX ISA 9.0 (tcgen05 is §9.7.16; later ISA versions number
// it §9.7.17 but keep the anchors).
//
// The wrappers live in common/ptx/, one file per instruction family; kernels include this header.
#pragma once
#include "ptx/build.h"     // per-build namespaces, TCG_DEV / TCG_LOC / TCG_AT
#include "ptx/sync.cuh"    // shared memory, threads, clusters
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/tensormap.cuh"  // tensormap.replace, its proxy fences, prefetch.tensormap
#include "ptx/clc.cuh"     // cluster launch control (try_cancel, query_cancel)
#include "ptx/tma_store.cuh"  // TMA store, bulk groups, fence.proxy.async, st.shared.v4
#include "ptx/dsmem.cuh"   // distributed shared memory: 16-byte remote ld/st, bulk copy into a peer CTA
#include "ptx/tcgen05.cuh"
#include "ptx/warp_mma.cuh"
#include "ptx/global.cuh"  // global memory one CTA stores and another loads (split-K partials)
#include "ptx/trace.cuh"   // %globaltimer and the timeline recorder (--trace)
