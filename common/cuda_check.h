// cuda_check.h — error checking for host code: every failure names file:line and the call.
#pragma once
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace tcg {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(const char* file, int line, const char* call, const std::string& what) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + what);
}

}  // namespace tcg

#define CUDA_CHECK(call)                                                                      \
  do {                                                                                        \
    cudaError_t tcg_err_ = (call);                                                            \
    if (tcg_err_ != cudaSuccess)                                                              \
      ::tcg::throw_cuda_error(__FILE__, __LINE__, #call,                                      \
                              std::string(cudaGetErrorName(tcg_err_)) + ": " + cudaGetErrorString(tcg_err_)); \
  } while (0)
