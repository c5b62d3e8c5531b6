// cuda_sim.h — what CUDA provides to device code, provided to g++ by the emulator.
//
// Included (only in the TCG_SIM build) after the CUDA headers, so kernel sources compile
// unchanged with g++: the execution-space keywords become plain C++, and the built-in variables
// and barriers read the state of the emulated thread that is currently running (a fiber).
#pragma once
#include <cuda_runtime_api.h>  // dim3, uint3 (host definitions)

#include "sim.h"

// cuda_runtime's host_defines.h already maps __device__, __global__, __host__, __forceinline__
// and __grid_constant__ to host-compatible spellings for non-nvcc compilers.
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#ifndef __cluster_dims__
#define __cluster_dims__(...)
#endif

#define threadIdx (::tcsim::current().thread_idx)
#define blockIdx (::tcsim::current().block_idx)
#define blockDim (::tcsim::current().block_dim)
#define gridDim (::tcsim::current().grid_dim)

#define __syncthreads() ::tcsim::syncthreads(::tcsim::SrcLoc{__FILE__, __LINE__})
#define __syncwarp(...) ::tcsim::syncwarp(::tcsim::SrcLoc{__FILE__, __LINE__})
