// timing_params.h — the timing model's parameters as timing.cpp reads them: one id per row of
// the parameter table (timing_params.cpp, which holds the B200 values with their sources and reads
// parameter files), and the value each has now.
#pragma once

namespace tcsim {
namespace detail {

// The rows of the parameter table, in its order (timing_params.cpp, kDefaultParams).
enum ParamId {
  kClockGHz,
  kMmaIssueCyclesPerN,
  kMmaLatency128,
  kMmaLatency64,
  kMmaLatencyPair,
  kSmemOperandBytesPerCycle,
  kTmaLatencyNs,
  kTmaSmBytesPerNs,
  kL2BytesPerNs,
  kHbmBytesPerNs,
  kSectorBytes,
  kInstructionCycles,
  kWakeCycles,
  kTmemLdBytesPerCycle,
  kTmemLdLatencyCycles,
  kStoreBytesPerCycle,
  kStoreBufferBytes,
  kRemoteArriveCycles,
  kTmemAllocCycles,
  kCtaLaunchNs,
  kWarpMmaCycles,
  kClcRoundTripNs,
  kSms,
  kPartialSectorCost,
  kChipWriteLinesPerNs,
  kChipWriteSectorsPerNs,
  kFenceInitCycles,
  kTmaBoxCycles,
  kMbarHandoffCycles,
  kTmaChipRequestsPerNs,
  kGlobalAtomicCycles,
  kDsmemLatencyCycles,
  kDsmemBytesPerCycle,
  kDsmemCopyCycles,
  kReleaseMembarCycles,
  kClusterBarrierCycles,
  kMulticastReceiveShare,
  kEvalGapNs,       // not read by the kernel model: what a published competition time adds (docs/timing_model.md)
  kEvalHostCallNs,  // the same
  kEvalHostCallCuteDslNs,  // the same, for a CuTe DSL submission (the task's template)
  kL2CapacityMB,
  kL2UsableShare,
  kNumParams
};

// The current value of a parameter, in the unit of its row (the B200 default, or a file's).
double p(ParamId id);

}  // namespace detail
}  // namespace tcsim
