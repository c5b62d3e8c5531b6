// gpu_grouped.cpp — a grouped NVFP4 step (step 16) on a GPU: every group's operands and C_g in
// their own device allocations (as the competition passes them), the GroupDesc table in device
// memory, the checked launch (every C_g starts as NaN), a second launch that must give bitwise the
// same C_g, the CPU verification of every group (grouped_reference.cpp; cuBLASLt has no grouped
// NVFP4 matmul to compare with), and the timing with L2 flushed, beside the case's stated speed of
// light when the groups are a preset. --trace is not offered for grouped steps (refused, exit 2).
// Not yet run on a B200: no Blackwell GPU was at hand when it was written.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common/harness/gpu.h"
#include "common/harness/grouped_reference.h"

namespace tcg::harness {

int run_grouped_on_gpu(const StepSpec& spec, const Options& o, LaunchFn launch, const GpuInfo& gpu) {
  const std::string prog = program_name(spec);
  if (!o.trace_path.empty()) {
    std::fprintf(stderr, "%s: --trace: not offered for the grouped GEMM on a GPU (the emulator traces it)\n",
                 prog.c_str());
    return 2;
  }
  if (!start_planned_gpu_run(spec, o, gpu)) return 2;

  const GroupList& gl = o.groups;
  const size_t G = gl.m.size();
  const GroupedNvfp4Inputs in = make_grouped_nvfp4_inputs(o.inputs, o.seed, gl);
  Stream stream;
  std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> ops;
  std::vector<std::unique_ptr<DeviceBuffer<__half>>> cs;
  std::vector<GroupDesc> table(G);
  auto upload = [&](const std::vector<uint8_t>& v) {
    ops.push_back(std::make_unique<DeviceBuffer<uint8_t>>(v.size()));
    if (!v.empty())
      CUDA_CHECK(cudaMemcpyAsync(ops.back()->get(), v.data(), v.size(), cudaMemcpyHostToDevice, stream.get()));
    return static_cast<const uint8_t*>(ops.back()->get());
  };
  for (size_t g = 0; g < G; ++g) {
    const Nvfp4HostInputs& h = in.groups[g];
    table[g].a = upload(h.a.data);
    table[g].b = upload(h.b.data);
    table[g].sfa = upload(h.a.sf);
    table[g].sfb = upload(h.b.sf);
    cs.push_back(std::make_unique<DeviceBuffer<__half>>(size_t(gl.m[g] * gl.n)));
    table[g].c = cs.back()->get();
    table[g].m = int32_t(gl.m[g]);
  }
  DeviceBuffer<GroupDesc> dev_table(std::max<size_t>(G, 1));
  CUDA_CHECK(cudaMemcpyAsync(dev_table.get(), table.data(), G * sizeof(GroupDesc), cudaMemcpyHostToDevice,
                             stream.get()));
  const StepWorkspace ws = workspace_for(spec, o, gpu.sm_count);
  DeviceBuffer<uint8_t> ws_d(std::max<size_t>(ws.bytes, 1));
  CUDA_CHECK(cudaMemsetAsync(ws_d.get(), 0xFF, ws_d.bytes(), stream.get()));  // the slots: the kernel writes them

  GemmArgs args;
  args.m = static_cast<int>(o.m);
  args.n = static_cast<int>(o.n);
  args.k = static_cast<int>(o.k);
  args.groups.desc = dev_table.get();
  args.groups.count = int(G);
  args.groups.host_m = gl.m.data();
  args.workspace = ws.bytes ? ws_d.get() : nullptr;
  args.workspace_bytes = ws.bytes;
  args.stream = stream.get();

  // The checked launch, then a second one; each C_g starts as NaN (0xFFFF).
  auto run_once = [&](std::vector<std::vector<__half>>* out) {
    for (size_t g = 0; g < G; ++g)
      if (cs[g]->bytes()) CUDA_CHECK(cudaMemsetAsync(cs[g]->get(), 0xFF, cs[g]->bytes(), stream.get()));
    launch_step(launch, args);
    wait_or_give_up(stream.get(), spec);
    out->assign(G, {});
    for (size_t g = 0; g < G; ++g) {
      (*out)[g].resize(cs[g]->count());
      if (cs[g]->bytes())
        CUDA_CHECK(cudaMemcpy((*out)[g].data(), cs[g]->get(), cs[g]->bytes(), cudaMemcpyDeviceToHost));
    }
  };
  std::vector<std::vector<__half>> out, again;
  run_once(&out);
  run_once(&again);
  for (size_t g = 0; g < G; ++g) {
    const std::string bad = repeat_difference(out[g].data(), again[g].data(), int64_t(out[g].size()), gl.n);
    if (!bad.empty()) throw std::runtime_error(strf("group %zu: ", g) + bad);
  }
  std::printf("repeat:   a second launch gave bitwise the same C_g in every group\n");

  VerifyResult vr;
  if (o.check) vr = verify_grouped(o.inputs, in, gl, out);
  print_verify(o.check ? &vr : nullptr);

  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, gpu.index));
  const DeviceBuffer<unsigned char> flush(std::max<size_t>(2 * static_cast<size_t>(l2_bytes), 1));
  const Timing ours = time_launches([&] { launch_step(launch, args); }, stream.get(), flush, o.warmup, o.iters);
  std::printf("time:     %.4f ms median of %d launches (L2 flushed) = %.1f TFLOPS\n", ours.median_ms, ours.launches,
              tflops(spec, o, ours.median_ms));
  if (gl.speed_of_light_us > 0)
    std::printf("bound:    %.2fx the stated speed of light (%.3f us)\n", ours.median_ms * 1e3 / gl.speed_of_light_us,
                gl.speed_of_light_us);
  const CsvRecord row = gpu_record(spec, o, o.check ? &vr : nullptr, gpu, ours);
  return finish(spec, o, o.check ? &vr : nullptr, row);
}

}  // namespace tcg::harness
