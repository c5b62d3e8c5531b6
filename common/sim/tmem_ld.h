// tmem_ld.h — a warp's tcgen05.ld as the emulator keeps it between its issue and the read
// (tmem.cpp): the load's operands, walked register by register when it is performed and when a
// check asks which TMEM cells or registers it touches. internal.h includes it.
#pragma once
#include <array>
#include <cstdint>

#include "sim.h"

namespace tcsim {
namespace detail {

struct Cta;
struct Fiber;

// One warp's tcgen05.ld: read from TMEM at a point the scheduler chooses between the issue and
// the warp's tcgen05.wait::ld (which forces it if it has not happened yet). Kept as the load's
// operands, not a list of its registers (512 for a .32x32b.x16): for_each_cell walks them.
struct LdBatch {
  Cta* cta;
  SrcLoc at;
  LdShape shape;
  int num;
  uint32_t lane0, col0;
  std::array<uint32_t*, 32> dst{};  // each lane's destination registers (nullptr: not a lane of the load)
  bool done = false;
  // Set when the issuing thread synchronises with others before waiting for the load: from then
  // on the read happens as late as allowed (at tcgen05.wait::ld), so a thread that released the
  // TMEM too early lets the next MMA overwrite it first.
  bool deferred = false;
  double t_done = 0;  // timing model: when the registers are written
  int regs_per_lane() const { return shape == LdShape::k32x32b ? num : 4 * num; }
  // The TMEM columns it reads: [col0, col0 + ncols()).
  uint32_t ncols() const { return shape == LdShape::k32x32b ? uint32_t(num) : 8u * uint32_t(num); }
  // fn(register, TMEM lane, TMEM column) for each register it writes: lane by lane, then in
  // register order (PTX ISA §9.7.16.8.3: .32x32b, thread t reads lane t, one column a
  // register; .16x256b, thread t reads lanes t/4 and t/4+8, the column pair 2*(t%4) of each 8).
  // Defined in tmem.cpp, its only user (tests/gpu/break_probes.sh changes the map there).
  template <class F>
  void for_each_cell(F&& fn) const;
};

// One lane's operands of a tcgen05.ld (tmem.cpp), kept where a lane that went on past it
// (collective_continue) leaves them until its warp's last lane performs it.
struct LdLaneArgs {
  uint32_t taddr;
  uint32_t* regs;
  Fiber* fiber;
  LdShape shape;
  int num;
  SrcLoc at;
};

}  // namespace detail
}  // namespace tcsim
