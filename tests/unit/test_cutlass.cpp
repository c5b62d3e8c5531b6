// test_cutlass.cpp — cross-checks common/descriptors.h against CUTLASS / CuTe (nvidia-cutlass 4.2.0.0).
//
// Compiled WITHOUT -DTCG_SIM, with -I<cutlass_library>/source/include (see the Makefile). Checked:
//   * UMMA::LayoutType / F16F32Format / CFormat / Major values vs tcg::Layout / F16Kind / DType;
//   * UMMA::make_instr_desc<...>() and make_runtime_instr_desc<...>() vs make_idesc_f16;
//   * UMMA::SmemDescriptor written field by field vs make_smem_desc, and read back field by field
//     vs decode_smem_desc;
//   * UMMA::make_umma_desc on real CuTe shared-memory tensors (tile_to_shape of the K- and MN-major
//     atoms), the per-k-step descriptors CuTe hands to the MMA (make_fragment_A/B), and CuTe's
//     own element addresses vs kmajor_operand_addr / mnmajor_operand_addr;
//   * the block-scaled idesc (kind::mxf4nvf4, step 07): make_instr_desc_block_scaled, the
//     SM100_MMA_MXF4_SS traits' idesc_ and make_runtime_instr_desc_block_scaled (SF IDs from
//     TMEM address bits 30-31) vs make_idesc_mxf4nvf4 / decode_idesc_block_scaled, and
//     float_e2m1_t / float_ue4m3_t (nv_float4_t's types) vs e2m1_to_float / ue4m3_to_float.
//
// Host build of make_umma_desc: CuTe turns the smem pointer into a shared-window address with
// cast_smem_ptr_to_uint(), which on the host (no __CUDA_ARCH__) prints "ERROR: cast_smem_ptr_to_uint
// not supported but used." and returns 0. Everything else in make_umma_desc and the MMA fragment
// code is CUTE_HOST_DEVICE and runs fine under g++. So before including CuTe we switch on its
// __cvta_generic_to_shared path and supply a host version of that intrinsic that maps a static,
// 1024-byte-aligned arena onto the shared-window addresses [0x8000, 0x18000). With the arena
// 1024-aligned, the swizzle CuTe applies to real host pointers acts on the same low address bits
// as it would on the shared-window address, so element addresses can be compared too.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/descriptors.h"

#if !defined(TCG_NO_CUTLASS) && defined(__has_include)
#if !__has_include(<cute/tensor.hpp>)
#define TCG_NO_CUTLASS 1
#endif
#endif

#if defined(TCG_NO_CUTLASS)

TEST_CASE("CUTLASS cross-check of descriptors.h") {
  FAIL("CUTLASS headers not found, so descriptors.h was NOT cross-checked against CUTLASS. Install them "
       "with `pip install nvidia-cutlass==4.2.0.0` (the Makefile locates <site-packages>/cutlass_library/"
       "source/include through `python3 -c \"import cutlass_library\"`; or pass "
       "CUTLASS_INCLUDE=/path/to/cutlass/include to make), then rebuild: make build/tests/unit_tests");
}

#else  // CUTLASS available

// ---- host stand-in for the shared-memory window (see the header comment) ---------------------
alignas(1024) static unsigned char tcg_test_smem_arena[64 * 1024];
static constexpr uint32_t kSmemWindowBase = 0x8000;  // shared::cta address of arena[0]

#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1
static inline std::size_t __cvta_generic_to_shared(const void* p) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  if (c < tcg_test_smem_arena || c >= tcg_test_smem_arena + sizeof(tcg_test_smem_arena))
    return 0xFFFFFFFFu;  // not in the fake shared memory: makes every comparison below fail
  return kSmemWindowBase + static_cast<std::size_t>(c - tcg_test_smem_arena);
}

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm100.hpp>

namespace {

using cute::UMMA::Major;
using cute::UMMA::LayoutType;
using cute::bfloat16_t;
using cute::half_t;

template <class T>
T rt(T v) {
  volatile T x = v;
  return x;
}

// Shared-window address of a host pointer into the arena.
uint32_t smem_addr_of(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

}  // namespace

// ==============================================================================================
// Enums
// ==============================================================================================

static_assert(uint32_t(LayoutType::SWIZZLE_NONE) == uint32_t(tcg::Layout::kNone), "");
static_assert(uint32_t(LayoutType::SWIZZLE_128B_BASE32B) == uint32_t(tcg::Layout::kSwizzle128B_Base32B), "");
static_assert(uint32_t(LayoutType::SWIZZLE_128B) == uint32_t(tcg::Layout::kSwizzle128B), "");
static_assert(uint32_t(LayoutType::SWIZZLE_64B) == uint32_t(tcg::Layout::kSwizzle64B), "");
static_assert(uint32_t(LayoutType::SWIZZLE_32B) == uint32_t(tcg::Layout::kSwizzle32B), "");

TEST_CASE("CUTLASS enums match ours") {
  CHECK(uint32_t(rt(LayoutType::SWIZZLE_NONE)) == uint32_t(tcg::Layout::kNone));
  CHECK(uint32_t(rt(LayoutType::SWIZZLE_128B_BASE32B)) == uint32_t(tcg::Layout::kSwizzle128B_Base32B));
  CHECK(uint32_t(rt(LayoutType::SWIZZLE_128B)) == uint32_t(tcg::Layout::kSwizzle128B));
  CHECK(uint32_t(rt(LayoutType::SWIZZLE_64B)) == uint32_t(tcg::Layout::kSwizzle64B));
  CHECK(uint32_t(rt(LayoutType::SWIZZLE_32B)) == uint32_t(tcg::Layout::kSwizzle32B));
  // Every CUTLASS layout type is one our validity check accepts, and CuTe's swizzle width agrees
  // with layout_row_bytes (Swizzle<B,4,3>: 16 << B bytes).
  CHECK(tcg::layout_is_valid(uint32_t(rt(LayoutType::SWIZZLE_64B))));
  CHECK(tcg::layout_row_bytes(tcg::Layout(uint32_t(rt(LayoutType::SWIZZLE_32B)))) == 16u << 1);
  CHECK(tcg::layout_row_bytes(tcg::Layout(uint32_t(rt(LayoutType::SWIZZLE_64B)))) == 16u << 2);
  CHECK(tcg::layout_row_bytes(tcg::Layout(uint32_t(rt(LayoutType::SWIZZLE_128B)))) == 16u << 3);
  CHECK(tcg::layout_row_bytes(tcg::Layout(uint32_t(rt(LayoutType::SWIZZLE_NONE)))) == 16u << 0);
  // Formats used in the instruction descriptor.
  CHECK(uint32_t(rt(cute::UMMA::F16F32Format::BF16)) == uint32_t(tcg::F16Kind::kBF16));
  CHECK(uint32_t(rt(cute::UMMA::F16F32Format::F16)) == uint32_t(tcg::F16Kind::kF16));
  CHECK(uint32_t(rt(cute::UMMA::CFormat::F32)) == uint32_t(tcg::DType::kF32));
  CHECK(uint32_t(rt(cute::UMMA::CFormat::F16)) == uint32_t(tcg::DType::kF16));
  CHECK(uint32_t(rt(cute::UMMA::CFormat::S32)) == uint32_t(tcg::DType::kS32));
  // Major::MN <-> our "mn_major = true" (idesc transpose bit = 1).
  CHECK(uint32_t(rt(Major::MN)) == 1u);
  CHECK(uint32_t(rt(Major::K)) == 0u);
}

// ==============================================================================================
// Instruction descriptor
// ==============================================================================================

namespace {

template <class AB, class C, int M, int N, Major AM, Major BM,
          cute::UMMA::ScaleIn NA = cute::UMMA::ScaleIn::One, cute::UMMA::ScaleIn NB = cute::UMMA::ScaleIn::One>
void check_idesc(tcg::F16Kind ab, tcg::DType d) {
  // The 32-bit descriptor, read through the union exactly as make_runtime_instr_desc does.
  const cute::UMMA::InstrDescriptor cd = cute::UMMA::make_instr_desc<AB, AB, C, M, N, AM, BM, NA, NB>();
  const uint32_t theirs = static_cast<uint32_t>(cd);
  const uint32_t ours = tcg::make_idesc_f16(ab, ab, d, rt(uint32_t(M)), rt(uint32_t(N)), AM == Major::MN,
                                            BM == Major::MN, NA == cute::UMMA::ScaleIn::Neg,
                                            NB == cute::UMMA::ScaleIn::Neg);
  CHECK_MESSAGE(theirs == ours, "M ", M, " N ", N, " a_major ", int(AM), " b_major ", int(BM));
  // CUTLASS's runtime form: the 32-bit descriptor in the upper half, the (sparse-metadata) lower
  // half 0; the MMA wrappers pass uint32_t(idescE >> 32) as the PTX idesc operand.
  const uint64_t runtime = cute::UMMA::make_runtime_instr_desc<AB, AB, C, M, N, AM, BM, NA, NB>();
  CHECK(runtime == (uint64_t(ours) << 32));
  CHECK(uint32_t(runtime >> 32) == ours);
  CHECK(uint32_t(runtime) == 0u);
  // And the decoded fields agree with what CUTLASS stored.
  const tcg::Idesc dec = tcg::decode_idesc(ours);
  CHECK(dec.m == uint32_t(cd.m_dim_) << 4);
  CHECK(dec.n == uint32_t(cd.n_dim_) << 3);
  CHECK(dec.a_format == uint32_t(cd.a_format_));
  CHECK(dec.b_format == uint32_t(cd.b_format_));
  CHECK(dec.d_format == uint32_t(cd.c_format_));
  CHECK(dec.a_mn_major == uint32_t(cd.a_major_));
  CHECK(dec.b_mn_major == uint32_t(cd.b_major_));
}

}  // namespace

TEST_CASE("make_instr_desc: CUTLASS vs make_idesc_f16") {
  using tcg::DType;
  using tcg::F16Kind;
  // BF16 x BF16 -> F32, both K-major: the steps' configuration and edges.
  check_idesc<bfloat16_t, float, 128, 128, Major::K, Major::K>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 128, 256, Major::K, Major::K>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 64, 64, Major::K, Major::K>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 128, 8, Major::K, Major::K>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 64, 8, Major::K, Major::K>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 128, 248, Major::K, Major::K>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 256, 256, Major::K, Major::K>(F16Kind::kBF16, DType::kF32);  // cta_group::2
  // FP16 inputs, F32 and F16 accumulators.
  check_idesc<half_t, float, 128, 128, Major::K, Major::K>(F16Kind::kF16, DType::kF32);
  check_idesc<half_t, float, 128, 256, Major::K, Major::K>(F16Kind::kF16, DType::kF32);
  check_idesc<half_t, float, 64, 64, Major::K, Major::K>(F16Kind::kF16, DType::kF32);
  check_idesc<half_t, float, 128, 8, Major::K, Major::K>(F16Kind::kF16, DType::kF32);
  check_idesc<half_t, half_t, 128, 128, Major::K, Major::K>(F16Kind::kF16, DType::kF16);
  check_idesc<bfloat16_t, half_t, 128, 128, Major::K, Major::K>(F16Kind::kBF16, DType::kF16);
  // MN-major (transposed) operands.
  check_idesc<bfloat16_t, float, 128, 256, Major::MN, Major::K>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 128, 128, Major::K, Major::MN>(F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 128, 128, Major::MN, Major::MN>(F16Kind::kBF16, DType::kF32);
  check_idesc<half_t, float, 64, 64, Major::MN, Major::MN>(F16Kind::kF16, DType::kF32);
  // Negated operands.
  check_idesc<bfloat16_t, float, 128, 128, Major::K, Major::K, cute::UMMA::ScaleIn::Neg, cute::UMMA::ScaleIn::One>(
      F16Kind::kBF16, DType::kF32);
  check_idesc<bfloat16_t, float, 128, 128, Major::K, Major::K, cute::UMMA::ScaleIn::One, cute::UMMA::ScaleIn::Neg>(
      F16Kind::kBF16, DType::kF32);

  // CUTLASS itself reproduces the values we encoded by hand from PTX ISA §9.7.16.4.2 (so the comparisons above are anchored
  // to known constants, not only to each other).
  CHECK(static_cast<uint32_t>(cute::UMMA::make_instr_desc<bfloat16_t, bfloat16_t, float, 128, 256, Major::K, Major::K>()) ==
        rt(0x08400490u));
  CHECK(static_cast<uint32_t>(cute::UMMA::make_instr_desc<half_t, half_t, float, 128, 128, Major::K, Major::K>()) ==
        rt(0x08200010u));
  CHECK(static_cast<uint32_t>(cute::UMMA::make_instr_desc<bfloat16_t, bfloat16_t, float, 128, 256, Major::MN, Major::K>()) ==
        rt(0x08408490u));
  CHECK(static_cast<uint32_t>(cute::UMMA::make_instr_desc<bfloat16_t, bfloat16_t, float, 256, 256, Major::K, Major::K>()) ==
        rt(0x10400490u));
  CHECK(static_cast<uint32_t>(cute::UMMA::make_instr_desc<bfloat16_t, bfloat16_t, float, 128, 128, Major::K, Major::K>()) ==
        rt(0x08200490u));
}

// ==============================================================================================
// Block-scaled instruction descriptor (kind::mxf4nvf4, step 07) and the NVFP4 number formats
// ==============================================================================================

namespace {

// NVFP4 as CUTLASS names it: nv_float4_t<float_e2m1_t> = E2M1 data with UE4M3 scale factors.
using Nvfp4 = cutlass::nv_float4_t<cutlass::float_e2m1_t>;
using E2M1 = Nvfp4::DataType;
using UE4M3 = Nvfp4::ScaleFactorType;
static_assert(std::is_same_v<E2M1, cutlass::float_e2m1_t> && std::is_same_v<UE4M3, cutlass::float_ue4m3_t>, "");

// The idesc of SM100_MMA_MXF4_SS<E2M1, E2M1, float, SF, 128, N, VS = 16> (the kind::mxf4nvf4
// block16 atom) three ways: make_instr_desc_block_scaled, the MMA traits' own idesc_, and the
// runtime form the atom hands to the PTX (make_runtime_instr_desc_block_scaled, upper 32 bits),
// which also copies bits 30-31 of the scale-factor TMEM addresses into the SF ID fields.
template <class SF, int N>
void check_idesc_mxf4(bool ue4m3) {
  CAPTURE(N);
  CAPTURE(ue4m3);
  const uint32_t ours = tcg::make_idesc_mxf4nvf4(rt(128u), rt(uint32_t(N)), ue4m3);
  const cute::UMMA::InstrDescriptorBlockScaled cd =
      cute::UMMA::make_instr_desc_block_scaled<E2M1, E2M1, float, SF, 128, N, Major::K, Major::K>();
  CHECK(static_cast<uint32_t>(cd) == ours);
  using Atom = cute::SM100_MMA_MXF4_SS<E2M1, E2M1, float, SF, 128, N, 16, Major::K, Major::K>;
  const cute::MMA_Traits<Atom> traits{};
  CHECK(static_cast<uint32_t>(traits.idesc_) == ours);
  for (uint32_t a_byte = 0; a_byte < 4; ++a_byte)
    for (uint32_t b_byte = 0; b_byte < 4; ++b_byte) {
      const uint32_t sfa = rt(a_byte << 30 | 0x100u), sfb = rt(b_byte << 30 | 0x120u);
      const uint64_t runtime = cute::UMMA::make_runtime_instr_desc_block_scaled<E2M1, E2M1, float, SF, 128, N,
                                                                                Major::K, Major::K>(sfa, sfb);
      CHECK(uint32_t(runtime) == 0u);
      CHECK(uint32_t(runtime >> 32) == tcg::make_idesc_mxf4nvf4(128, N, ue4m3, a_byte, b_byte));
    }
  // Our decoder reads back what CUTLASS stored, field by field.
  const tcg::IdescBlockScaled d = tcg::decode_idesc_block_scaled(ours);
  CHECK(d.a_format == uint32_t(cd.a_format_));
  CHECK(d.b_format == uint32_t(cd.b_format_));
  CHECK(d.scale_type == uint32_t(cd.scale_format_));
  CHECK(d.n == uint32_t(cd.n_dim_) << 3);
  CHECK(d.m == uint32_t(cd.m_dim_) << 4);
  CHECK(d.sfa_id == uint32_t(cd.a_sf_id_));
  CHECK(d.sfb_id == uint32_t(cd.b_sf_id_));
  CHECK(d.k_size == uint32_t(cd.k_size_));
  CHECK(d.a_mn_major == uint32_t(cd.a_major_));
  CHECK(d.b_mn_major == uint32_t(cd.b_major_));
  CHECK(d.negate_a == uint32_t(cd.a_negate_));
  CHECK(d.sparse == uint32_t(cd.sparse_flag_));
}

}  // namespace

TEST_CASE("make_instr_desc_block_scaled / SM100_MMA_MXF4_SS: CUTLASS vs make_idesc_mxf4nvf4, bit for bit") {
  CHECK(uint32_t(rt(cute::UMMA::MXF4Format::E2M1)) == tcg::kMxf4FormatE2M1);
  CHECK(uint32_t(rt(cute::UMMA::ScaleFormat::UE4M3)) == uint32_t(tcg::ScaleType::kUE4M3));
  CHECK(uint32_t(rt(cute::UMMA::ScaleFormat::UE8M0)) == uint32_t(tcg::ScaleType::kUE8M0));
  CHECK(uint32_t(cute::UMMA::to_UMMAFormat<E2M1>()) == 1u);  // not 5, the f8f6f4 code
  check_idesc_mxf4<UE4M3, 8>(true);
  check_idesc_mxf4<UE4M3, 64>(true);
  check_idesc_mxf4<UE4M3, 128>(true);
  check_idesc_mxf4<UE4M3, 192>(true);
  check_idesc_mxf4<UE4M3, 248>(true);
  check_idesc_mxf4<UE4M3, 256>(true);
  check_idesc_mxf4<cutlass::float_ue8m0_t, 128>(false);
  check_idesc_mxf4<cutlass::float_ue8m0_t, 256>(false);
  // CUTLASS reproduces the value we encoded by hand from PTX ISA §9.7.16.4.2.
  CHECK(static_cast<uint32_t>(cute::UMMA::make_instr_desc_block_scaled<E2M1, E2M1, float, UE4M3, 128, 256, Major::K,
                                                                       Major::K>()) == rt(0x08400480u));
  CHECK(tcg::is_valid_mxf4_shape_cta1(128, 8));  // SM100_MMA_MXF4_SS's static_asserts: M = 128, N % 8 in [8, 256]
  CHECK_FALSE(tcg::is_valid_mxf4_shape_cta1(64, 128));
}

// The pair atom SM100_MMA_MXF4_2x1SM_SS (step 15's 2-SM form): its traits' idesc for M = 256 is
// make_idesc_mxf4nvf4(256, N) bit for bit.
template <int N>
void check_idesc_mxf4_2sm() {
  CAPTURE(N);
  using Atom = cute::SM100_MMA_MXF4_2x1SM_SS<E2M1, E2M1, float, UE4M3, 256, N, 16, Major::K, Major::K>;
  const cute::MMA_Traits<Atom> traits{};
  CHECK(static_cast<uint32_t>(traits.idesc_) == tcg::make_idesc_mxf4nvf4(rt(256u), rt(uint32_t(N))));
  CHECK(tcg::is_valid_mxf4_shape_cta2(256, N));
}

TEST_CASE("SM100_MMA_MXF4_2x1SM_SS: CUTLASS's pair idesc vs make_idesc_mxf4nvf4(256, N)") {
  check_idesc_mxf4_2sm<16>();
  check_idesc_mxf4_2sm<64>();
  check_idesc_mxf4_2sm<128>();
  check_idesc_mxf4_2sm<256>();
}

TEST_CASE("e2m1_to_float / ue4m3_to_float vs CUTLASS's float_e2m1_t / float_ue4m3_t, every code") {
  for (uint32_t c = 0; c < 16; ++c) {
    CAPTURE(c);
    const float theirs = float(E2M1::bitcast(uint8_t(c)));
    CHECK(tcg::e2m1_to_float(uint8_t(c)) == theirs);
    CHECK(std::signbit(tcg::e2m1_to_float(uint8_t(c))) == std::signbit(theirs));
  }
  for (uint32_t b = 0; b < 0x80; ++b) {  // the unsigned codes; 0x7F is NaN in both
    CAPTURE(b);
    const float theirs = float(UE4M3::bitcast(uint8_t(b)));
    const float ours = tcg::ue4m3_to_float(uint8_t(b));
    CHECK(std::isnan(ours) == std::isnan(theirs));
    if (!std::isnan(theirs)) CHECK(ours == theirs);
  }
  CHECK(float(UE4M3::bitcast(0x7E)) == 448.0f);
}

// ==============================================================================================
// Shared-memory descriptor: CUTLASS's bitfield union vs make_smem_desc / decode_smem_desc
// ==============================================================================================

namespace {

// Fill UMMA::SmemDescriptor the way make_umma_desc does (version 1, relative LBO mode).
uint64_t cutlass_smem_desc(uint32_t start, uint32_t lbo, uint32_t sbo, LayoutType lt, uint32_t base_offset = 0) {
  cute::UMMA::SmemDescriptor d;  // desc_ = 0
  d.version_ = 1;
  d.lbo_mode_ = 0;
  d.base_offset_ = base_offset;
  d.layout_type_ = uint8_t(lt);
  d.start_address_ = uint16_t(start >> 4);
  d.leading_byte_offset_ = uint16_t(lbo >> 4);
  d.stride_byte_offset_ = uint16_t(sbo >> 4);
  return d.desc_;
}

struct SmemCase {
  const char* what;
  uint32_t start, lbo, sbo;
  LayoutType lt;
  tcg::Layout ours;
  uint32_t base_offset;
};

// clang-format off
const SmemCase kSmemCases[] = {
    {"step 01 A, no swizzle (LBO 128*16, SBO 8*16)",  0x1000, 2048, 128,  LayoutType::SWIZZLE_NONE, tcg::Layout::kNone,        0},
    {"step 01 B, k-step 3",                            0x5000 + 3 * 4096, 2048, 128, LayoutType::SWIZZLE_NONE, tcg::Layout::kNone, 0},
    {"PTX Table 40 SW128",                               0x8000, 16,   1024, LayoutType::SWIZZLE_128B, tcg::Layout::kSwizzle128B, 0},
    {"SW128, +32 B k-step",                            0x8020, 16,   1024, LayoutType::SWIZZLE_128B, tcg::Layout::kSwizzle128B, 0},
    {"tcgen05 for dummies v2 (LBO 0)",              0x1000, 0,    1024, LayoutType::SWIZZLE_128B, tcg::Layout::kSwizzle128B, 0},
    {"SW64",                                           0x2000, 16,   512,  LayoutType::SWIZZLE_64B,  tcg::Layout::kSwizzle64B,  0},
    {"SW32",                                           0x2100, 16,   256,  LayoutType::SWIZZLE_32B,  tcg::Layout::kSwizzle32B,  0},
    {"128B_BASE32B",                                   0x3000, 1024, 512,  LayoutType::SWIZZLE_128B_BASE32B, tcg::Layout::kSwizzle128B_Base32B, 0},
    {"PTX Table 40 cp SF source",                    0x9000, 0,    128,  LayoutType::SWIZZLE_NONE, tcg::Layout::kNone,        0},
    {"MN-major SW128 (LBO 1024, SBO 2048)",            0x10000, 1024, 2048, LayoutType::SWIZZLE_128B, tcg::Layout::kSwizzle128B, 0},
    {"largest fields",                                 0x3FFF0, 0x3FFF0, 0x3FFF0, LayoutType::SWIZZLE_32B, tcg::Layout::kSwizzle32B, 7},
    {"non-zero base offset",                           0x8180, 16,   1024, LayoutType::SWIZZLE_128B, tcg::Layout::kSwizzle128B, 3},
};
// clang-format on

}  // namespace

TEST_CASE("UMMA::SmemDescriptor fields vs make_smem_desc, bit for bit") {
  for (const SmemCase& c : kSmemCases) {
    const uint64_t ours = tcg::make_smem_desc(rt(c.start), rt(c.lbo), rt(c.sbo), c.ours, rt(c.base_offset));
    const uint64_t theirs = cutlass_smem_desc(c.start, c.lbo, c.sbo, c.lt, c.base_offset);
    CHECK_MESSAGE(ours == theirs, c.what);

    // Read our value back through CUTLASS's bitfields and compare with our decoder.
    cute::UMMA::SmemDescriptor v;
    v.desc_ = ours;
    const tcg::SmemDesc dec = tcg::decode_smem_desc(ours);
    CHECK_MESSAGE((uint32_t(v.start_address_) << 4) == dec.start, c.what);
    CHECK_MESSAGE((uint32_t(v.leading_byte_offset_) << 4) == dec.lbo, c.what);
    CHECK_MESSAGE((uint32_t(v.stride_byte_offset_) << 4) == dec.sbo, c.what);
    CHECK_MESSAGE(uint32_t(v.version_) == 1u, c.what);  // bits 46-47; bit 48 is CUTLASS padding = 0
    CHECK_MESSAGE(dec.fixed46_48 == 1u, c.what);
    CHECK_MESSAGE(uint32_t(v.base_offset_) == dec.base_offset, c.what);
    CHECK_MESSAGE(uint32_t(v.lbo_mode_) == dec.lbo_mode, c.what);
    CHECK_MESSAGE(uint32_t(v.layout_type_) == dec.layout, c.what);
    // The lo/hi view CUTLASS uses to advance only the start address.
    CHECK_MESSAGE(v.lo == uint32_t(ours), c.what);
    CHECK_MESSAGE(v.hi == uint32_t(ours >> 32), c.what);
  }
  // The step 01 A descriptor at 0x1000 by hand (test_descriptors.cpp): 0x0000400800800100.
  CHECK(cutlass_smem_desc(rt(0x1000u), 2048, 128, LayoutType::SWIZZLE_NONE) == 0x0000400800800100ull);
  CHECK(cutlass_smem_desc(rt(0x8000u), 16, 1024, LayoutType::SWIZZLE_128B) == 0x4000404000010800ull);
}

TEST_CASE("UMMA::DescriptorIterator + n advances the start field like our start + 16*n bytes") {
  const uint64_t base = tcg::make_smem_desc(rt(0x8000u), 16, 1024, tcg::Layout::kSwizzle128B);
  cute::UMMA::SmemDescriptor d;
  d.desc_ = base;
  const cute::UMMA::DescriptorIterator it{d};
  for (uint32_t j = 0; j < 4; ++j) {
    const cute::UMMA::SmemDescriptor next = *(it + 2 * j);  // CuTe counts in 16-byte units
    CHECK(next.desc_ == tcg::make_smem_desc(0x8000 + 32 * j, 16, 1024, tcg::Layout::kSwizzle128B));
  }
}

// ==============================================================================================
// make_umma_desc on CuTe smem tensors, the MMA's per-k-step descriptors, and element addresses
// ==============================================================================================

namespace {

struct TileCheck {
  int desc_mismatch = 0;   // CuTe's per-k-step descriptor != make_smem_desc(expected start, ...)
  int addr_mismatch = 0;   // our address function (on CuTe's descriptor) != CuTe's element address
  int ksteps = 0;
  uint64_t whole_tile = 0; // make_umma_desc on the whole tile
};

// A tile of kRows x kK bf16 (rows = M or N, K = the reduction dim) built with
// tile_to_shape(atom, (kRows, kK)) at arena offset `offset`, consumed by a 128 x kRows (kRows = 256:
// B operand of a 128x256 MMA) or 128 x 128 (A operand) kind::f16 MMA with the given majorness.
// `step_start(s)` is the expected shared-window start address of MMA k-step s (K = 16 per step).
// make_umma_desc on the whole tile only accepts one canonical block along K (a K-major tile two
// SW128 atoms wide fails its "profile" static_assert), so kWholeTile = false skips that call; the
// MMA fragment still builds one descriptor per k-step from the k-step's own sub-tensor.
template <Major kMajor, int kRows, int kK, bool kWholeTile = true, class Atom, class StepStart>
TileCheck check_cute_tile(Atom atom, uint32_t offset, uint32_t lbo, uint32_t sbo, tcg::Layout lay,
                          StepStart step_start) {
  using namespace cute;
  TileCheck out;
  auto layout = tile_to_shape(atom, Shape<Int<kRows>, Int<kK>>{});
  bfloat16_t* ptr = reinterpret_cast<bfloat16_t*>(tcg_test_smem_arena + offset);
  Tensor s = make_tensor(make_smem_ptr(ptr), layout);
  if constexpr (kWholeTile) out.whole_tile = UMMA::make_umma_desc<kMajor>(s);

  auto per_step = [&](auto frag) {
    out.ksteps = int(size<2>(frag));
    for (int st = 0; st < out.ksteps; ++st) {
      const UMMA::SmemDescriptor cd = frag(0, 0, st);
      if (cd.desc_ != tcg::make_smem_desc(step_start(uint32_t(st)), lbo, sbo, lay)) ++out.desc_mismatch;
      const tcg::SmemDesc d = tcg::decode_smem_desc(cd.desc_);
      for (int r = 0; r < kRows; ++r)
        for (int kk = 0; kk < 16; ++kk) {
          const uint32_t cute_addr = smem_addr_of(&s(r, 16 * st + kk));
          const uint32_t our_addr = kMajor == Major::K ? tcg::kmajor_operand_addr(d, uint32_t(r), uint32_t(2 * kk))
                                                       : tcg::mnmajor_operand_addr(d, uint32_t(r), uint32_t(kk), 2);
          if (cute_addr != our_addr) ++out.addr_mismatch;
        }
    }
  };
  if constexpr (kRows == 256) {
    auto mma = make_tiled_mma(SM100_MMA_F16BF16_SS<bfloat16_t, bfloat16_t, float, 128, 256, kMajor, kMajor>{});
    auto thr = mma.get_slice(0);
    per_step(thr.make_fragment_B(thr.partition_B(s)));
  } else {
    auto mma = make_tiled_mma(SM100_MMA_F16BF16_SS<bfloat16_t, bfloat16_t, float, 128, 128, kMajor, kMajor>{});
    auto thr = mma.get_slice(0);
    per_step(thr.make_fragment_A(thr.partition_A(s)));
  }
  return out;
}

}  // namespace

TEST_CASE("make_umma_desc<K>: CuTe K-major tiles vs make_smem_desc and kmajor_operand_addr") {
  using namespace cute;
  using tcg::Layout;
  // Step 01's layout: Layout_K_INTER_Atom<bf16> tiled to 128 x 64 is ((8,16),(8,8)):((8,64),(1,1024))
  // elements: rows 16 B apart, 8-row groups 128 B apart (SBO), k-groups 2048 B apart (LBO) — the
  // [k/8][r][k%8] box of step 01. K-step s starts 2 k-groups = 4096 B later.
  {
    const TileCheck t = check_cute_tile<Major::K, 128, 64>(UMMA::Layout_K_INTER_Atom<bfloat16_t>{}, 0, 2048, 128,
                                                           Layout::kNone, [](uint32_t s) { return 0x8000 + 4096 * s; });
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 2048, 128, Layout::kNone));
    CHECK(t.whole_tile == 0x0000400800800800ull);
    CHECK(t.ksteps == 4);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW128, 128 x 64 (hand-encoded from PTX ISA Table 40): SBO 1024, LBO field 1, k-step s at +32 s bytes.
  {
    const TileCheck t = check_cute_tile<Major::K, 128, 64>(UMMA::Layout_K_SW128_Atom<bfloat16_t>{}, 0, 16, 1024,
                                                           Layout::kSwizzle128B, [](uint32_t s) { return 0x8000 + 32 * s; });
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 16, 1024, Layout::kSwizzle128B));
    CHECK(t.whole_tile == 0x4000404000010800ull);
    CHECK(t.ksteps == 4);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW128, 128 x 128: two atom columns along K, the second 128 rows * 128 B = 16 KiB further.
  {
    const TileCheck t = check_cute_tile<Major::K, 128, 128, false>(
        UMMA::Layout_K_SW128_Atom<bfloat16_t>{}, 0, 16, 1024, Layout::kSwizzle128B,
        [](uint32_t s) { return 0x8000 + 16384 * (s / 4) + 32 * (s % 4); });
    CHECK(t.ksteps == 8);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW128, B operand of a 128 x 256 MMA: 256 rows x 64, placed 16 KiB into the arena (0xC000).
  {
    const TileCheck t = check_cute_tile<Major::K, 256, 64>(UMMA::Layout_K_SW128_Atom<bfloat16_t>{}, 16384, 16, 1024,
                                                           Layout::kSwizzle128B, [](uint32_t s) { return 0xC000 + 32 * s; });
    CHECK(t.whole_tile == tcg::make_smem_desc(0xC000, 16, 1024, Layout::kSwizzle128B));
    CHECK(t.ksteps == 4);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW64, 128 x 32 (64-byte rows): SBO 512, two k-steps 32 B apart.
  {
    const TileCheck t = check_cute_tile<Major::K, 128, 32>(UMMA::Layout_K_SW64_Atom<bfloat16_t>{}, 0, 16, 512,
                                                           Layout::kSwizzle64B, [](uint32_t s) { return 0x8000 + 32 * s; });
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 16, 512, Layout::kSwizzle64B));
    CHECK(t.ksteps == 2);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW32, 128 x 16 (32-byte rows): SBO 256, one k-step.
  {
    const TileCheck t = check_cute_tile<Major::K, 128, 16>(UMMA::Layout_K_SW32_Atom<bfloat16_t>{}, 0, 16, 256,
                                                           Layout::kSwizzle32B, [](uint32_t) { return 0x8000u; });
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 16, 256, Layout::kSwizzle32B));
    CHECK(t.ksteps == 1);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
}

TEST_CASE("make_umma_desc<MN>: CuTe MN-major tiles vs make_smem_desc and mnmajor_operand_addr") {
  using namespace cute;
  using tcg::Layout;
  // All 128 (M) x 64 (K) bf16, atoms tiled M-first. K-step s (16 K rows = 2 groups of 8) starts
  // 2 * 1024 elements = 4096 B later in every case.
  auto step = [](uint32_t s) { return 0x8000 + 4096 * s; };
  // INTER: ((8,16),(8,8)):((1,64),(8,1024)) el -> next 16 B of M 128 B away (SBO), next 8 K 2048 B (LBO).
  {
    const TileCheck t = check_cute_tile<Major::MN, 128, 64>(UMMA::Layout_MN_INTER_Atom<bfloat16_t>{}, 0, 2048, 128,
                                                            Layout::kNone, step);
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 2048, 128, Layout::kNone));
    CHECK(t.ksteps == 4);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW32: ((16,8),(8,8)):((1,128),(16,1024)) el -> LBO (next M atom) 256 B, SBO (next 8 K) 2048 B.
  {
    const TileCheck t = check_cute_tile<Major::MN, 128, 64>(UMMA::Layout_MN_SW32_Atom<bfloat16_t>{}, 0, 256, 2048,
                                                            Layout::kSwizzle32B, step);
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 256, 2048, Layout::kSwizzle32B));
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW64: ((32,4),(8,8)):((1,256),(32,1024)) el -> LBO 512 B, SBO 2048 B.
  {
    const TileCheck t = check_cute_tile<Major::MN, 128, 64>(UMMA::Layout_MN_SW64_Atom<bfloat16_t>{}, 0, 512, 2048,
                                                            Layout::kSwizzle64B, step);
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 512, 2048, Layout::kSwizzle64B));
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
  // SW128 (our encoding from PTX ISA Table 40; CUTLASS's `make_umma_desc` gives the same value in tests/unit/test_cutlass.cpp): ((64,2),(8,8)):((1,512),(64,1024)) el -> LBO 1024 B, SBO 2048 B.
  {
    const TileCheck t = check_cute_tile<Major::MN, 128, 64>(UMMA::Layout_MN_SW128_Atom<bfloat16_t>{}, 0, 1024, 2048,
                                                            Layout::kSwizzle128B, step);
    CHECK(t.whole_tile == tcg::make_smem_desc(0x8000, 1024, 2048, Layout::kSwizzle128B));
    CHECK(t.whole_tile == 0x4000408000400800ull);
    CHECK(t.ksteps == 4);
    CHECK(t.desc_mismatch == 0);
    CHECK(t.addr_mismatch == 0);
  }
}

#endif  // TCG_NO_CUTLASS
