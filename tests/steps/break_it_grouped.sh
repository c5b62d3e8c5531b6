# break_it_grouped.sh — the "Break it" cases of the grouped GEMM, step 16 (docs/16): sourced by
# break_it.sh, whose case_ and conventions it uses. Groups of M 77, 40, 130 and 1 on 2 SMs: each
# CTA enters several groups (and rewrites its tensor-map slots), the last token tile of a group
# is partial.
S16=steps/step16_nvfp4_grouped.cu
S16_ARGS="--groups 77,40,130,1 --n 256 --k 512 --inputs integer --sim-sms 2"
# The maps are written for the first group a CTA enters and never again ("the slot already holds
# a map"): the next group's tiles read the previous group's operands through it. Nothing the
# emulator can see is wrong with the copies; the result is, in the groups that follow.
ARGS=$S16_ARGS case_ s16-tile-reads-previous-groups-map $S16 "every:diag:check:    FAIL" \
  '        if (at.group != slot_group) {' '        if (slot_group < 0) {  // "the slot already holds a map"'
# The rewrite without its release: the copy's acquire has nothing to acquire (PTX ISA §9.7.13.4).
ARGS=$S16_ARGS case_ s16-rewrite-without-release $S16 "every:diag:tcsim: tensor map rewrite not ordered before its use" \
  '          fence_proxy_tensormap_release<TensormapScope::kCta>();' ''
# No acquire by the copying thread: the tensormap proxy may still hold the old map.
ARGS=$S16_ARGS case_ s16-rewrite-without-acquire $S16 "every:diag:ran no fence.proxy.tensormap::generic.acquire" \
  '          fence_proxy_tensormap_acquire<TensormapScope::kCta>(my);' ''
# C_g's rows past M_g written ("the MMA computed them; they are zeros"): the last token tile of a
# group stores past the end of C_g, its own allocation.
ARGS=$S16_ARGS case_ s16-c-rows-past-m $S16 "every:diag:tcsim: global memory access out of bounds" \
  '            if (at.y0 + col + j < m && xr < n)' '            if (xr < n)  // "rows past M_g are zeros anyway"'
# Only the slot's last stage waited for before its rewrite ("copies land in order"): an earlier
# stage's copy through the slot may not have read the map yet.
ARGS="--groups 1,0,40,130,77,8,3 --n 200 --k 512 --inputs integer --sim-sms 2" KNOBS="TCG_STEP16_SWAP_AB=1 TCG_STEP16_BLOCK_N=64" \
  case_ s16-rewrite-while-copy-reads $S16 "diag:tcsim: tensor map rewritten while a copy reads it" \
  '          for (int j = stage - NUM_STAGES > 0 ? stage - NUM_STAGES : 0; j <= last; ++j)' \
  '          for (int j = last; j >= 0 && j > stage - 1 - NUM_STAGES && j == last; --j)  // "the last one lands last"'
