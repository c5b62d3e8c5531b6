// tensormap_replace.cpp — tensor maps rewritten on the device, and the ordering that makes a
// rewrite visible to the TMA copies that read the map.
//
// Models tensormap.replace (PTX ISA §9.7.9.26), fence.proxy.tensormap::generic (§9.7.13.4) and
// prefetch.tensormap (§9.7.9.15) on the emulator's own tensor-map layout (SimMap,
// tensor_map_boxes.h), which cp.async.bulk.tensor then reads from wherever the kernel keeps the
// map: a kernel parameter, or global memory (a grouped GEMM's per-group maps, passed by pointer).
// Checked:
//  * tensormap.replace: the object 128-byte aligned (.b1024; CUtensorMap is declared alignas(128)),
//    in the state space the form names (.global: a registered global allocation; .shared::cta:
//    this CTA's shared memory), holding a tensor map; the field's value range (rank 1..5 given
//    zero-based, box_dim 1..256, global_dim >= 1, global_stride a multiple of 16 below 2^40,
//    element_stride 1..8, the enumerations of Table 33, global_address 16-byte aligned as
//    cuTensorMapEncodeTiled requires) and the ordinal below the map's rank (global_stride: below
//    rank - 1, it names globalStrides[ord]). A replaced map is validated again at its next use,
//    as cuTensorMapEncodeTiled would validate it (an inner box of 16-byte multiples, within the
//    swizzle span), and refused where the emulator does not model a value (rank above 3, element
//    strides other than 1, interleave, NaN fill, swizzle atomicity, the 96B swizzle, packed types).
//  * Ordering, for a map in global memory: tensormap.replace is a weak generic-proxy write of the
//    whole object, cp.async.bulk.tensor reads the map through the tensormap proxy. The copy sees
//    the write only if the writer ran fence.proxy.tensormap::generic.release.<scope> after it, the
//    copying thread ran fence.proxy.tensormap::generic.acquire.<scope> [map], 128 after that
//    release happened before it (§8.9), and each scope covers the other thread. A map the host
//    wrote before the launch needs the acquire too: the tensormap proxy is not acquired at kernel
//    start (§8.9.4). A copy missing any of these is reported with the thread, the map, the
//    rewrite and the fence that is missing or mis-scoped. So are two unordered rewrites of one map
//    by different threads, and a rewrite while a copy issued through the map has not yet read it
//    (the copy's read is asynchronous: it may see either version).
// Writes of a map the emulator sees: tensormap.replace.global, and 16-byte st.global.v4 stores
// (common/ptx/global.cuh) into a 128-byte block that then holds a map (a map copied into global
// memory by the kernel). Not modelled: tensormap.cp_fenceproxy, plain C++ stores of a map (not
// seen), and the read of a TMA store's map (taken at the issue, not at the bulk group's .read wait).
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "internal.h"

namespace tcsim {
using namespace detail;

namespace {

const char* scope_name(FenceScope s) {
  return s == FenceScope::kCta ? ".cta" : s == FenceScope::kCluster ? ".cluster" : s == FenceScope::kGpu ? ".gpu" : ".sys";
}

struct Where {  // a thread as the scopes see it (the fiber may be freed before the check)
  uint3 block{}, cluster{};
  uint32_t agent = 0;
  std::string name;
};
Where where(const Fiber& f) { return Where{f.vars.block_idx, f.cta->cluster->id, f.agent, who(f)}; }
bool same3(uint3 a, uint3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
// Does a fence of scope `s` by thread `a` reach thread `b`?
bool covers(FenceScope s, const Where& a, const Where& b) {
  if (s == FenceScope::kCta) return same3(a.block, b.block);
  if (s == FenceScope::kCluster) return same3(a.cluster, b.cluster);
  return true;
}

struct Rewrite {  // the last tensormap.replace of one map in global memory
  uint32_t version = 0;  // 0: none in this launch (the map as the host wrote it)
  Where by;
  std::string how;  // "tensormap.replace.global", "st.global.v4 (a tensor map's bytes)"
  Stamp stamp;
  SrcLoc at{};
  bool released = false;
  FenceScope release_scope = FenceScope::kCta;
  Stamp release_stamp;
  SrcLoc release_at{};
};
struct Use {  // a TMA copy through the map: a rewrite must come after its read of the map
  std::shared_ptr<bool> read;  // set when the copy has read the map (its first box landed)
  uint32_t agent;
  Stamp stamp;  // the issue
  std::string by;
  SrcLoc at;
};
struct Acquire {  // a thread's last acquire fence on one map
  uint32_t covers_version = 0;  // the newest rewrite it made visible
  FenceScope scope = FenceScope::kCta;
  SrcLoc at{};
  std::string why_not;  // when it did not cover the newest rewrite: what was missing
};
struct State {
  std::unordered_map<uintptr_t, Rewrite> rewrites;
  std::unordered_map<uintptr_t, std::vector<Use>> uses;
  std::map<std::pair<uint32_t, uintptr_t>, Acquire> acquires;  // (agent, map)
  std::unordered_map<uint32_t, std::vector<uintptr_t>> unreleased;  // agent -> maps it rewrote since its last release
};
State g_state;

std::string map_name(uintptr_t a) { return "the tensor map at " + hex(a); }

// Is `p` inside some CTA's shared memory (a map there cannot be a copy's operand)?
bool in_shared(const void* p) {
  const Fiber& f = me();
  const uint8_t* b = f.cta->smem;
  return p >= b && p < b + f.cta->smem_bytes;
}

void check_value(bool ok, const std::string& what, const std::string& rule) {
  if (!ok) fail_here("bad tensormap.replace value", what + ": " + rule + " (PTX ISA §9.7.9.26)");
}

// The encoder's rules (tcg::validate) on a map a replace has changed, and what the emulator models.
void revalidate(const SimMap& m, const char* what) {
  const auto bad = [&](const std::string& d) {
    fail_here("invalid rewritten tensor map",
              std::string(what) + " through a tensor map that tensormap.replace left invalid: " + d +
                  " (the rules cuTensorMapEncodeTiled checks hold for a rewritten map too)");
  };
  const auto unmodelled = [&](const std::string& d) {
    fail_here("tensor map feature not modelled",
              std::string(what) + " through a rewritten tensor map with " + d + ", which the emulator does not model");
  };
  if (m.rank > 3) unmodelled("rank " + std::to_string(m.rank) + " (it models 1..3)");
  if (m.interleave != 0) unmodelled("an interleaved layout");
  if (m.fill_mode != 0) unmodelled("NaN fill of out-of-bounds elements");
  if (m.swizzle_atomicity != 0) unmodelled("a swizzle atomicity other than 16 bytes");
  if (m.swizzle_mode == 4) unmodelled("the 96B swizzle");
  if (m.elemtype >= 13) unmodelled("a packed 4- or 6-bit element type");
  for (uint32_t i = 0; i < m.rank; ++i)
    if (m.elem_strides[i] != 1) unmodelled("element stride " + std::to_string(m.elem_strides[i]) + " in dimension " + std::to_string(i));
  if (m.base % 16 != 0) bad("global address " + hex(m.base) + " is not 16-byte aligned");
  if ((m.box[0] * m.elem_bytes) % 16 != 0)
    bad("the inner box extent is " + std::to_string(m.box[0] * m.elem_bytes) + " bytes, not a multiple of 16");
  if (m.swizzle_span && m.box[0] * m.elem_bytes > m.swizzle_span)
    bad("the inner box extent is " + std::to_string(m.box[0] * m.elem_bytes) + " bytes, more than the " +
        std::to_string(m.swizzle_span) + "B swizzle span");
}

uint32_t elem_bytes_of(uint32_t elemtype) {  // PTX ISA Table 33's numbering
  static const uint32_t bytes[13] = {1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4};
  return elemtype < 13 ? bytes[elemtype] : 1;
}

// A generic-proxy write of the whole map at `a` in global memory by the running thread: racing
// with a copy that may still read the map, or with another thread's unordered write, is reported;
// otherwise it is the map's newest version, to be released and acquired before a copy uses it.
void note_map_write(uintptr_t a, const std::string& what, SrcLoc at) {
  Fiber& f = me();
  Rewrite& w = g_state.rewrites[a];
  for (const Use& u : g_state.uses[a]) {
    if (!*u.read)
      fail_here("tensor map rewritten while a copy reads it",
                what + " by " + who(f) + " rewrites " + map_name(a) + " while the TMA copy issued by " + u.by + " at " +
                    loc(u.at) + " through it has not yet read it: the copy may see either map, or a mix. Wait for "
                    "the copy's mbarrier phase (or its bulk group) before rewriting");
    if (u.agent != f.agent && !hb_ordered(f, u.stamp))
      fail_here("tensor map rewritten while a copy reads it",
                what + " by " + who(f) + " rewrites " + map_name(a) + ", which the TMA copy issued by " + u.by + " at " +
                    loc(u.at) + " reads, with nothing ordering the rewrite after that copy: under another "
                    "interleaving the copy reads the new map, or a mix (a write-after-read race)");
  }
  if (w.version && w.by.agent != f.agent && !hb_ordered(f, w.stamp))
    fail_here("unordered tensor map rewrites",
              what + " by " + who(f) + " rewrites " + map_name(a) + ", which " + w.by.name + " rewrote at " + loc(w.at) +
                  " with nothing ordering the two: tensormap.replace is a weak write of the whole object (PTX ISA "
                  "§9.7.9.26), and two unordered writes race");
  const uint32_t version = w.version + 1;
  w = Rewrite{};
  w.version = version;
  w.by = where(f);
  w.how = what;
  w.stamp = hb_stamp(f);
  w.at = at;
  auto& mine = g_state.unreleased[f.agent];
  if (std::find(mine.begin(), mine.end(), a) == mine.end()) mine.push_back(a);
}

}  // namespace

namespace detail {

void tensormap_reset() { g_state = State{}; }

void tensormap_generic_store(const void* dst, SrcLoc at) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst) & ~uintptr_t(127);
  uint32_t magic = 0;
  std::memcpy(&magic, reinterpret_cast<const void*>(a), sizeof magic);
  if (magic == kMapMagic) note_map_write(a, "st.global.v4 (a tensor map's bytes)", at);
}

std::shared_ptr<bool> tensormap_use(const CUtensorMap* map, const SimMap& m, const char* what, bool async_read) {
  if (m.replaced) revalidate(m, what);
  if (in_shared(map))
    fail_here("tensor map in shared memory",
              std::string(what) + " with a tensor map in shared memory: the operand must be in .param, .const or .global "
                                  "(PTX ISA §9.7.9.25.5.2); copy the rewritten map to global memory first");
  const uintptr_t a = reinterpret_cast<uintptr_t>(map);
  if (!global_range_ok(map, sizeof(CUtensorMap))) return nullptr;  // a kernel parameter
  Fiber& f = me();
  const Where u = where(f);
  const Rewrite& w = g_state.rewrites[a];
  const auto acq = g_state.acquires.find({f.agent, a});
  if (acq == g_state.acquires.end()) {
    std::string others;
    for (const auto& kv : g_state.acquires)
      if (kv.first.first == f.agent) others += (others.empty() ? "" : ", ") + hex(kv.first.second);
    fail_here("tensor map used without its proxy fence",
              std::string(what) + " by " + u.name + " reads " + map_name(a) +
                  " in global memory, but this thread ran no fence.proxy.tensormap::generic.acquire on it" +
                  (others.empty() ? "" : " (its acquire fences name " + others + ")") +
                  (w.version ? "; the map was rewritten (" + w.how + ") by " + w.by.name + " at " + loc(w.at)
                             : "; the tensormap proxy is not acquired at kernel start, so a map the host wrote needs "
                               "the acquire too (PTX ISA §8.9.4)"));
  }
  if (acq->second.covers_version < w.version)
    fail_here("tensor map rewrite not ordered before its use",
              std::string(what) + " by " + u.name + " reads " + map_name(a) + ", rewritten by " + w.how + " in " +
                  w.by.name + " at " + loc(w.at) + ", but the copying thread's fence.proxy.tensormap::generic.acquire" +
                  scope_name(acq->second.scope) + " at " + loc(acq->second.at) + " does not order that rewrite before it: " +
                  (acq->second.why_not.empty() ? "the acquire ran before the rewrite" : acq->second.why_not) +
                  ". The copy may read the old map or a mix (PTX ISA §9.7.13.4, §8.9)");
  auto read = std::make_shared<bool>(!async_read);
  auto& list = g_state.uses[a];
  // A later copy by the same thread stands for its earlier ones that have read the map: a rewrite
  // ordered after the later issue is ordered after theirs.
  list.erase(std::remove_if(list.begin(), list.end(), [&](const Use& x) { return x.agent == f.agent && *x.read; }),
             list.end());
  list.push_back(Use{read, f.agent, hb_stamp(f), u.name, f.at});
  return read;
}

}  // namespace detail

void tensormap_replace(bool shared, uint64_t addr, TmapField field, int ord, uint64_t v, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  const char* what = shared ? "tensormap.replace.shared::cta" : "tensormap.replace.global";
  uint8_t* obj = nullptr;
  if (shared) {
    if ((addr & kOffsetMask) % 128 != 0)
      fail_here("misaligned tensor map", std::string(what) + " at " + hex(addr) +
                                             ": the .b1024 tensor-map object must be 128-byte aligned");
    obj = smem_ptr(*f.cta, uint32_t(addr), 128, what);
  } else {
    const void* p = reinterpret_cast<const void*>(uintptr_t(addr));
    if (addr % 128 != 0)
      fail_here("misaligned tensor map", std::string(what) + " at " + hex(addr) +
                                             ": the .b1024 tensor-map object must be 128-byte aligned");
    if (!global_range_ok(p, 128))
      fail_here("tensormap.replace outside its state space",
                std::string(what) + " at " + hex(addr) + (in_shared(p) ? ", an address in shared memory" : "") +
                    ", which is not a global allocation (a __grid_constant__ parameter cannot be rewritten: copy it "
                    "to global memory, or use the .shared::cta form); the address must fall in the .global window "
                    "(PTX ISA §9.7.9.26)");
    obj = reinterpret_cast<uint8_t*>(uintptr_t(addr));
  }
  SimMap m;
  memcpy(&m, obj, sizeof m);
  if (m.magic != kMapMagic)
    fail_here("bad tensor map", std::string(what) + " at " + hex(addr) + ": the 128 bytes there hold no tensor map");
  const std::string fld = std::string(what) + " of field ";
  const auto need_ord = [&](const char* name, uint32_t limit) {
    if (ord < 0 || uint32_t(ord) >= limit)
      fail_here("bad tensormap.replace ordinal",
                fld + name + " with ordinal " + std::to_string(ord) + ": the map has rank " + std::to_string(m.rank) +
                    ", so the ordinal must be below " + std::to_string(limit) + " (PTX ISA §9.7.9.26)");
  };
  switch (field) {
    case TmapField::kGlobalAddress:
      check_value(v % 16 == 0 && v != 0, fld + "global_address = " + hex(v), "must be a non-null 16-byte aligned address");
      m.base = v;
      break;
    case TmapField::kRank:
      check_value(v <= 4, fld + "rank = " + std::to_string(v),
                  "takes the rank minus one (zero-based numbering), 0..4 for ranks 1..5");
      m.rank = uint32_t(v) + 1;
      break;
    case TmapField::kBoxDim:
      need_ord("box_dim", m.rank);
      check_value(v >= 1 && v <= 256, fld + "box_dim[" + std::to_string(ord) + "] = " + std::to_string(v), "must be 1..256");
      if (ord < 3) m.box[ord] = uint32_t(v);
      break;
    case TmapField::kGlobalDim:
      need_ord("global_dim", m.rank);
      check_value(v >= 1 && v <= 0xFFFFFFFFull, fld + "global_dim[" + std::to_string(ord) + "] = " + std::to_string(v),
                  "must be at least 1 (a .b32 extent)");
      if (ord < 3) m.dims[ord] = v;
      break;
    case TmapField::kGlobalStride:
      need_ord("global_stride", m.rank - 1);
      check_value(v % 16 == 0 && v < (uint64_t(1) << 40),
                  fld + "global_stride[" + std::to_string(ord) + "] = " + std::to_string(v),
                  "must be a multiple of 16 bytes below 2^40");
      if (ord < 2) m.strides[ord] = v;
      break;
    case TmapField::kElementStride:
      need_ord("element_stride", m.rank);
      check_value(v >= 1 && v <= 8, fld + "element_stride[" + std::to_string(ord) + "] = " + std::to_string(v), "must be 1..8");
      if (ord < 3) m.elem_strides[ord] = uint32_t(v);
      break;
    case TmapField::kElemtype:
      check_value(v <= 15, fld + "elemtype = " + std::to_string(v), "must be one of Table 33's values 0..15");
      m.elemtype = uint32_t(v);
      m.elem_bytes = elem_bytes_of(m.elemtype);
      break;
    case TmapField::kInterleaveLayout:
      check_value(v <= 2, fld + "interleave_layout = " + std::to_string(v), "must be 0 (none), 1 (16B) or 2 (32B)");
      m.interleave = uint32_t(v);
      break;
    case TmapField::kSwizzleMode:
      check_value(v <= 4, fld + "swizzle_mode = " + std::to_string(v), "must be 0..4 (none, 32B, 64B, 128B, 96B)");
      m.swizzle_mode = uint32_t(v);
      m.swizzle_span = v == 1 ? 32 : v == 2 ? 64 : v == 3 ? 128 : v == 4 ? 96 : 0;
      break;
    case TmapField::kSwizzleAtomicity:
      check_value(v <= 3, fld + "swizzle_atomicity = " + std::to_string(v), "must be 0..3 (16B, 32B, 32B + 8B flip, 64B)");
      m.swizzle_atomicity = uint32_t(v);
      break;
    case TmapField::kFillMode:
      check_value(v <= 1, fld + "fill_mode = " + std::to_string(v), "must be 0 (zero fill) or 1 (NaN fill)");
      m.fill_mode = uint32_t(v);
      break;
  }
  m.replaced = 1;
  if (!shared) note_map_write(uintptr_t(addr), what, at);  // the map copies read: the one in global memory
  memcpy(obj, &m, sizeof m);
}

void fence_proxy_tensormap_release(FenceScope scope, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  auto it = g_state.unreleased.find(f.agent);
  if (it == g_state.unreleased.end()) return;
  const Stamp now = hb_stamp(f);
  for (uintptr_t a : it->second) {
    Rewrite& w = g_state.rewrites[a];
    if (w.by.agent != f.agent) continue;  // rewritten since by another thread
    w.released = true;
    w.release_scope = scope;
    w.release_stamp = now;
    w.release_at = at;
  }
  g_state.unreleased.erase(it);
}

void fence_proxy_tensormap_acquire(FenceScope scope, const void* addr, uint32_t size, SrcLoc at) {
  tick(at);
  Fiber& f = me();
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (size != 128)
    fail_here("bad proxy fence", "fence.proxy.tensormap::generic.acquire with size " + std::to_string(size) +
                                     ": 128 is the only size (PTX ISA §9.7.13.4)");
  if (!global_range_ok(addr, 128))
    fail_here("proxy fence outside .global",
              "fence.proxy.tensormap::generic.acquire at " + hex(a) +
                  ": the address must fall in the .global state space (PTX ISA §9.7.13.4); a __grid_constant__ "
                  "tensor map needs no fence, a map in global memory must be registered");
  const Where u = where(f);
  const Rewrite& w = g_state.rewrites[a];
  Acquire acq;
  acq.scope = scope;
  acq.at = at;
  if (w.version == 0) {
    acq.covers_version = 0;
  } else if (!w.released) {
    acq.why_not = "the rewriting thread ran no fence.proxy.tensormap::generic.release after the rewrite";
  } else if (w.by.agent != f.agent && !hb_ordered(f, w.release_stamp)) {
    acq.why_not = std::string("the release fence") + scope_name(w.release_scope) + " at " + loc(w.release_at) +
                  " does not happen before the acquire (no barrier or release/acquire pattern orders them)";
  } else if (!covers(w.release_scope, w.by, u)) {
    acq.why_not = std::string("the release fence at ") + loc(w.release_at) + " has scope " + scope_name(w.release_scope) +
                  ", which does not include the copying thread";
  } else if (!covers(scope, u, w.by)) {
    acq.why_not = std::string("its scope ") + scope_name(scope) + " does not include the rewriting thread";
  } else {
    acq.covers_version = w.version;
  }
  if (acq.covers_version < w.version) {  // an older acquire may still cover an older version
    auto old = g_state.acquires.find({f.agent, a});
    if (old != g_state.acquires.end()) acq.covers_version = old->second.covers_version;
  }
  g_state.acquires[{f.agent, a}] = acq;
}

void prefetch_tensormap(const void* addr, SrcLoc at) {
  tick(at);
  if (in_shared(addr))
    fail_here("tensor map in shared memory", "prefetch.tensormap of " + hex(reinterpret_cast<uintptr_t>(addr)) +
                                                 ", in shared memory: the map must be in .param, .const or .global "
                                                 "(PTX ISA §9.7.9.15)");
  if (reinterpret_cast<uintptr_t>(addr) % 64 != 0)
    fail_here("misaligned tensor map", "prefetch.tensormap of " + hex(reinterpret_cast<uintptr_t>(addr)) +
                                           ": a tensor map is at least 64-byte aligned (cuTensorMapEncodeTiled)");
  SimMap m;
  memcpy(&m, addr, sizeof m);
  if (m.magic != kMapMagic)
    fail_here("bad tensor map", "prefetch.tensormap of " + hex(reinterpret_cast<uintptr_t>(addr)) +
                                    ", which holds no tensor map that encode_tensor_map() produced");
}

}  // namespace tcsim
