// global_memory.cpp — the global memory emulated kernels may reach by raw address, and the bounds
// of every access the emulator makes through such an address.
//
// Models what compute-sanitizer's memcheck checks on a GPU: global memory is the set of
// allocations the host made (cudaMalloc; here the harness's EmuBuffer and the tests' buffers,
// registered with register_global), each of the size that was asked for. An access that lies
// outside every allocation, or starts inside one and runs past its end, is a fault on the GPU or
// silently reads or writes a neighbour; the emulator reports it at the issuing instruction with
// the address range, the nearest allocation and how far past its end the access reaches.
// Checked (at issue, by the callers): cp.async.bulk sources (copies.cpp), the in-bounds rows of a
// TMA box (a tensor map whose dims exceed its buffer; the out-of-bounds elements of a box are
// zero-filled and never read, PTX ISA §5.5.6), the in-bounds rows a TMA store writes
// (tma_store.cpp), 16-byte vector loads and stores of global memory (memory.cpp), and step 10's
// atom.acq_rel.gpu and st.relaxed.gpu (global_order.cpp). Plain C++ loads and stores of a kernel are ordinary host accesses and are not
// seen. An access when nothing is registered is reported too, with how to register: a kernel
// launched by a test must register the global memory it passes.
#include <iterator>
#include <map>
#include <stdexcept>

#include "internal.h"

namespace tcsim {
namespace {

struct Allocation {
  uintptr_t base = 0;
  size_t bytes = 0;
  std::string name;
};

std::map<uintptr_t, Allocation>& registry() {
  static std::map<uintptr_t, Allocation> r;
  return r;
}

// The allocation the last successful range check found (every global store of a kernel asks;
// they mostly hit one buffer, C). Forgotten whenever the registry changes.
struct LastHit {
  uintptr_t base = 0, end = 0;
} g_last_hit;

std::string describe(const Allocation& a) {
  return "\"" + a.name + "\" [" + detail::hex(a.base) + ", " + detail::hex(a.base + a.bytes) + ") (" +
         std::to_string(a.bytes) + " bytes)";
}

}  // namespace

void register_global(const void* base, size_t bytes, const char* name) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  if (!base || bytes == 0) throw std::invalid_argument("tcsim::register_global: null or empty allocation");
  auto& r = registry();
  auto next = r.lower_bound(b);
  const bool hits_next = next != r.end() && next->first < b + bytes;
  const bool hits_prev = next != r.begin() && std::prev(next)->first + std::prev(next)->second.bytes > b;
  if (hits_next || hits_prev)
    throw std::invalid_argument("tcsim::register_global: \"" + std::string(name) + "\" overlaps " +
                                describe(hits_next ? next->second : std::prev(next)->second));
  r[b] = Allocation{b, bytes, name};
  g_last_hit = LastHit{};
}

void unregister_global(const void* base) {
  registry().erase(reinterpret_cast<uintptr_t>(base));
  g_last_hit = LastHit{};
}

GlobalAllocation::GlobalAllocation(const void* base, size_t bytes, const char* name) : base_(base) {
  register_global(base, bytes, name);
}
GlobalAllocation::~GlobalAllocation() { unregister_global(base_); }

namespace detail {

bool global_range_ok(const void* p, uint64_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), e = a + bytes;
  if (a >= g_last_hit.base && a < g_last_hit.end && e <= g_last_hit.end) return true;
  const auto& r = registry();
  auto next = r.upper_bound(a);
  if (next == r.begin()) return false;
  const Allocation& in = std::prev(next)->second;
  if (!(a < in.base + in.bytes && e <= in.base + in.bytes)) return false;
  g_last_hit = LastHit{in.base, in.base + in.bytes};
  return true;
}

void check_global_range(const void* p, uint64_t bytes, const char* what) {
  if (global_range_ok(p, bytes)) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), e = a + bytes;
  const auto& r = registry();
  auto next = r.upper_bound(a);  // the first allocation starting after a
  const Allocation* prev = next != r.begin() ? &std::prev(next)->second : nullptr;
  std::string d = std::string(what) + " accesses [" + hex(a) + ", " + hex(e) + ") (" + std::to_string(bytes) + " bytes)";
  if (r.empty()) {
    d += ", but no global allocation is registered with the emulator. The harness registers its operands and C; a "
         "test kernel must register the global memory it passes (tcsim::GlobalAllocation) so that its accesses can be "
         "checked";
  } else if (prev && a < prev->base + prev->bytes) {
    d += ": it starts inside " + describe(*prev) + " but its last " + std::to_string(e - (prev->base + prev->bytes)) +
         " bytes lie past that allocation's end";
  } else {
    // Outside every allocation: name the nearest one, as memcheck does.
    const Allocation* near = prev;
    if (next != r.end() && (!prev || next->first - e < a - (prev->base + prev->bytes))) near = &next->second;
    if (near == prev && prev) {
      d += ", outside every allocation: it starts " + std::to_string(a - (prev->base + prev->bytes)) + " bytes past the end of the nearest, " +
           describe(*prev) + ", and ends " + std::to_string(e - (prev->base + prev->bytes)) + " bytes past it";
    } else {
      d += ", outside every allocation: it " +
           (e <= near->base ? "ends " + std::to_string(near->base - e) + " bytes before"
                            : "starts " + std::to_string(near->base - a) + " bytes before") +
           " the start of the nearest, " + describe(*near);
    }
  }
  fail_here("global memory access out of bounds",
            d + ". On the GPU this reads or writes whatever lies there, or faults with an illegal address "
                "(compute-sanitizer's memcheck reports it)");
}

}  // namespace detail
}  // namespace tcsim
