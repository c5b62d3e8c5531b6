#!/usr/bin/env bash
# check_sass.sh [STEP...] — reads the SASS that nvcc produced for each step (cuobjdump on
# build/stepNN.gpu.o; no GPU needed) and checks it against what the kernel should contain:
#   * no local memory (LDL/STL): register spills or stack arrays would show up here;
#   * the tensor-core, TMA and TMEM instructions the step is built from, e.g. for the tcgen05
#     steps UTCHMMA (tcgen05.mma) a multiple of 4 times (4 MMAs of K = 16 per 64-wide k-tile,
#     however the compiler unrolls the loop), UTCBAR (tcgen05.commit), LDTM (tcgen05.ld),
#     UTMALDG (TMA); for steps 05 and 06 their .2CTA forms and the cluster barrier; for step 08
#     the TMA store (UTMASTG), the proxy fence (FENCE.VIEW.ASYNC.S), wait_group (DEPBAR.LE) and
#     the 16-byte st.shared of the staging buffers (STS.128); for step 09 also
#     clusterlaunchcontrol.try_cancel.multicast::cluster::all (UGETNEXTWORKID.BROADCAST, and
#     never the one-CTA form UGETNEXTWORKID) and the 16-byte response load (LDS.128); query_cancel
#     has no opcode of its own (it compiles to bit tests and moves on the loaded registers).
#   * zero cost of the timeline annotations (--trace, docs/tracing.md): every kernel is a
#     template on bool kTrace, and in every architecture the object holds, the untraced
#     instantiation (mangled ILb0E) reads no %globaltimer (SR_GLOBALTIMER*) while the traced one
#     (ILb1E) does: a stamp that survived in the kernel every timed launch runs would show here.
#   * the GPUs the code loads on: the arch of every cubin in the object (and in the linked ./stepNN
#     when it exists) must give SASS that each listed compute capability loads: for the tcgen05
#     steps and probes 10.0 (B200, GB200) and 10.3 (B300, GB300), i.e. the sm_100f family cubin
#     (an sm_100a cubin loads on 10.0 only); for step 00 8.0, 9.0, 10.0 and 10.3. A cubin for
#     sm_NNN loads on compute capability N.M of the same major with M >= its minor; sm_NNNa only on
#     exactly N.N; sm_NNNf on the same major from its minor up (sm_100f: 10.0 and 10.3).
# This catches what the emulator cannot: a PTX wrapper whose instruction differs from its
# emulator twin (a missing .cta_group::2, a commit without .multicast, ...) still compiles,
# and the emulator would never know. cuobjdump/nvdisasm come from the CUDA toolkit or from the
# PyPI packages nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm (installed by tests/install_deps.sh, which `make test` runs).
set -u
cd "$(dirname "$0")/../.."
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
pybin=$(python3 -c "import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], 'cu13', 'bin'))" 2>/dev/null || true)
export PATH="$PATH:$CUDA_HOME/bin:${pybin:-/nonexistent}"
command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null ||
  { echo "FAIL: cuobjdump/nvdisasm not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)"; exit 1; }

# What each step's SASS must contain: OPCODE (present), OPCODE%N (present, count a multiple of
# N), !OPCODE (absent). Opcodes match from the start of the full mnemonic (UTCHMMA matches
# UTCHMMA.2CTA; use a trailing '$' for an exact mnemonic).
declare -A expect=(
  [step00]="HMMA LDSM"
  [step01]="UTCHMMA\$%4 UTCBAR\$ LDTM UTMALDG.3D"
  [step02]="UTCHMMA\$%4 UTCBAR\$ LDTM UTMALDG.2D\$"
  [step03]="UTCHMMA\$%4 UTCBAR\$ LDTM UTMALDG.2D\$"
  [step04]="UTCHMMA\$%4 UTCBAR\$ LDTM UTMALDG.2D\$"
  [step05]="UTCHMMA.2CTA%4 !UTCHMMA\$ UTCBAR.2CTA.MULTICAST !UTCBAR\$ LDTM UTMALDG.2D.2CTA UTCATOMSWS.2CTA UCGABAR_ARV UCGABAR_WAIT"
  [step06]="UTCHMMA.2CTA%4 !UTCHMMA\$ UTCBAR.2CTA.MULTICAST !UTCBAR\$ LDTM UTMALDG.2D.2CTA UTCATOMSWS.2CTA UCGABAR_ARV UCGABAR_WAIT"
  [step07]="UTCOMMA.4X !UTCHMMA UTCCP.T.S.4 UBLKCP.S.G UTCBAR\$ LDTM UTMALDG.2D\$ F2FP.F16.F32.PACK_AB"
  [step08]="UTCHMMA.2CTA%4 !UTCHMMA\$ UTCBAR.2CTA.MULTICAST !UTCBAR\$ LDTM UTMALDG.2D.2CTA UTMASTG.2D FENCE.VIEW.ASYNC.S DEPBAR.LE STS.128 UTCATOMSWS.2CTA UCGABAR_ARV UCGABAR_WAIT"
  [step09]="UTCHMMA.2CTA%4 !UTCHMMA\$ UTCBAR.2CTA.MULTICAST !UTCBAR\$ LDTM UTMALDG.2D.2CTA UTMASTG.2D FENCE.VIEW.ASYNC.S DEPBAR.LE STS.128 UTCATOMSWS.2CTA UCGABAR_ARV UCGABAR_WAIT UGETNEXTWORKID.BROADCAST !UGETNEXTWORKID\$ LDS.128"
  # The tcgen05 hardware probes (make build/tests/tcgen05_check; not a step, no trace template).
  # The TMA probe and the timing model's microbenchmarks (sm_90 and sm_100f; no tcgen05 in them).
  [tests/tma_check]="UTMALDG.2D UTMALDG.3D UTMASTG.2D FENCE.VIEW.ASYNC.S SYNCS.ARRIVE.TRANS64"
  [tests/micro]="UTMALDG.2D UTMASTG.2D UBLKCP.S.G UCGABAR_ARV UCGABAR_WAIT"
  [tests/tcgen05_check]="UTCHMMA\$ UTCHMMA.2CTA UTCOMMA.4X UTCCP.T.S.4 UBLKCP.S.G UTCBAR\$ UTCBAR.2CTA.MULTICAST LDTM UTCATOMSWS UTCATOMSWS.2CTA UTMALDG.2D.2CTA UCGABAR_ARV UCGABAR_WAIT"
  # step 10: step 07's, plus the split-K reduction: atom.acq_rel.gpu = MEMBAR.ALL.GPU (release) +
  # ATOMG...STRONG.GPU + CCTL.IVALL (acquire: drop stale L1 lines); st.relaxed.gpu = STG.E.STRONG.GPU;
  # the partials' 16-byte st/ld.global.v4 = STG.E.128 / LDG.E.128.
  [step10]="UTCOMMA.4X !UTCHMMA UTCCP.T.S.4 UBLKCP.S.G UTCBAR\$ LDTM UTMALDG.2D\$ F2FP.F16.F32.PACK_AB ATOMG.E.ADD.STRONG.GPU MEMBAR.ALL.GPU CCTL.IVALL STG.E.STRONG.GPU LDG.E.128 STG.E.128"
  # step 11: step 10's, plus the 3-D boxes of two k-tiles (UTMALDG.3D; the 2-D ones stay for a
  # tail or lone k-tile) and step 08's TMA-store epilogue (STS.128 staging, the proxy fence, the
  # store, the wait for its reads).
  # step 12: step 11's mainloop and C, no workspace atom; the DSMEM exchange: the bulk copy shared::cta ->
  # shared::cluster (UBLKCP.S.S), the 16-byte ld.shared::cluster (LD.E.128), the cluster barriers.
  [step12]="UTCOMMA.4X !UTCHMMA UTCCP.T.S.4 UBLKCP.S.G UBLKCP.S.S UTCBAR\$ LDTM UTMALDG.3D UTMALDG.2D\$ UTMASTG.2D FENCE.VIEW.ASYNC.S STS.128 LD.E.128 UCGABAR_ARV UCGABAR_WAIT F2FP.F16.F32.PACK_AB !ATOMG"
  # step 13: step 12's, plus the multicast copies of A (UTMALDG.3D/.2D.MULTICAST) and SFA
  # (UBLKCP.S.G.MULTICAST) and the multicast commit that frees a slot in every CTA (UTCBAR.MULTICAST).
  [step13]="UTCOMMA.4X !UTCHMMA UTCCP.T.S.4 UBLKCP.S.G UBLKCP.S.G.MULTICAST UBLKCP.S.S UTCBAR\$ UTCBAR.MULTICAST LDTM UTMALDG.3D UTMALDG.3D.MULTICAST UTMALDG.2D\$ UTMALDG.2D.MULTICAST UTMASTG.2D FENCE.VIEW.ASYNC.S STS.128 LD.E.128 UCGABAR_ARV UCGABAR_WAIT F2FP.F16.F32.PACK_AB !ATOMG"
  [step14]="UTCHMMA.2CTA%4 !UTCHMMA\$ UTCBAR.2CTA.MULTICAST !UTCBAR\$ LDTM UTMALDG.2D.2CTA UTMALDG.2D.MULTICAST.2CTA UTMASTG.2D FENCE.VIEW.ASYNC.S DEPBAR.LE STS.128 UTCATOMSWS.2CTA UCGABAR_ARV UCGABAR_WAIT UGETNEXTWORKID.BROADCAST !UGETNEXTWORKID\$ LDS.128"
  # step 15: step 12's (the dual GEMM adds a second MMA and B per k-step, not a new instruction).
  [step15]="UTCOMMA.4X UTCOMMA.2CTA.4X !UTCHMMA UTCCP.T.S.4 UTCCP.T.S.2CTA UTCBAR.2CTA.MULTICAST UTMALDG.3D.2CTA UTMALDG.2D.2CTA UBLKCP.S.G UBLKCP.S.S UTCBAR\$ LDTM UTMALDG.3D UTMALDG.2D\$ UTMASTG.2D FENCE.VIEW.ASYNC.S STS.128 LD.E.128 UCGABAR_ARV UCGABAR_WAIT F2FP.F16.F32.PACK_AB !ATOMG"
  # step 16: step 11's mainloop in 3-D boxes (no 2-D ones, no TMA store: C by 2- and 16-byte stores),
  # Y's multicast copies and commit (MC > 1), the template maps copied into the slots (STG.E.128),
  # the tensormap-proxy acquire (UTMACCTL.IV) and release (MEMBAR), the cluster barriers.
  [step16]="UTCOMMA.4X !UTCHMMA UTCCP.T.S.4 UBLKCP.S.G UBLKCP.S.G.MULTICAST UTCBAR LDTM UTMALDG.3D UTMALDG.3D.MULTICAST !UTMALDG.2D !UTMASTG STG.E.128 UTMACCTL.IV UCGABAR_ARV UCGABAR_WAIT F2FP.F16.F32.PACK_AB !ATOMG"
  [step11]="UTCOMMA.4X !UTCHMMA UTCCP.T.S.4 UBLKCP.S.G UTCBAR\$ LDTM UTMALDG.3D UTMALDG.2D\$ UTMASTG.2D FENCE.VIEW.ASYNC.S DEPBAR.LE STS.128 F2FP.F16.F32.PACK_AB ATOMG.E.ADD.STRONG.GPU MEMBAR.ALL.GPU CCTL.IVALL STG.E.STRONG.GPU LDG.E.128 STG.E.128"
)
# The compute capabilities (major*10 + minor) each object's SASS must load on (default: 100 103).
declare -A loads_on=(
  [step00]="80 90 100 103"
  [tests/tma_check]="90 100 103"
  [tests/micro]="90 100 103"
)
# Does a cubin for arch $1 (sm_100, sm_100a, sm_100f) load on compute capability $2 (e.g. 103)?
cubin_loads() {
  local num=${1#sm_} suffix=""
  [[ $num =~ [af]$ ]] && { suffix=${num: -1}; num=${num%?}; }
  case $suffix in
    a) [ "$num" -eq "$2" ] ;;
    *) [ $((num / 10)) -eq $(($2 / 10)) ] && [ "$2" -ge "$num" ] ;;
  esac
}
[ $# -gt 0 ] || set -- $(make --no-print-directory -s list-steps)
bad=0
for step in "$@"; do
  obj=build/$step.gpu.o
  [ -f "$obj" ] || { echo "FAIL $step: $obj missing (make $step first)"; bad=1; continue; }
  sass=$(cuobjdump -sass "$obj")
  ops=$(sed -nE 's#^\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P[0-9T] )?([A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*).*#\2#p' <<<"$sass")
  [ -n "$ops" ] || { echo "FAIL $step: no SASS found in $obj"; bad=1; continue; }
  problems=()
  # The GPUs the code loads on: every cubin's arch, from the object and from the linked binary.
  archs=$(cuobjdump -elf "$obj" | sed -n 's/^arch = //p' | sort -u | tr '\n' ' '); archs=${archs% }
  bin=""; [[ $step == step* ]] && [ -x "./$step" ] && bin=./$step
  if [ -n "$bin" ]; then
    bin_archs=$(cuobjdump -elf "$bin" | sed -n 's/^arch = //p' | sort -u | tr '\n' ' '); bin_archs=${bin_archs% }
    [ "$bin_archs" = "$archs" ] || problems+=("$bin holds ${bin_archs:-no cubin}, $obj ${archs:-none} (stale binary?)")
  fi
  for cc in ${loads_on[$step]:-100 103}; do
    ok=0; for a in $archs; do cubin_loads "$a" "$cc" && ok=1; done
    [ $ok = 1 ] || problems+=("no cubin loads on compute capability $((cc / 10)).$((cc % 10)) (cubins: ${archs:-none})")
  done
  summary=("cubins $archs (load on ${loads_on[$step]:-100 103}${bin:+; $bin too});")
  # Local memory: spills and stack arrays.
  nlocal=$(grep -cE '^(LDL|STL)(\.|$)' <<<"$ops")
  [ "$nlocal" -eq 0 ] || problems+=("$nlocal local-memory instructions (LDL/STL)")
  spec=${expect[$step]:-}
  [ -n "$spec" ] || problems+=("no expectations listed for this step in tests/checks/check_sass.sh")
  for e in $spec; do
    neg=0; mult=1
    [[ $e == !* ]] && { neg=1; e=${e#!}; }
    [[ $e == *%* ]] && { mult=${e#*%}; e=${e%\%*}; }
    pat="^${e//./\\.}"; [[ $pat == *'$' ]] || pat="$pat(\.|$)"
    n=$(grep -cE "$pat" <<<"$ops")
    if [ $neg = 1 ]; then
      [ "$n" -eq 0 ] || problems+=("$n x ${e%\$} (must not appear)")
    elif [ "$n" -eq 0 ]; then
      problems+=("no ${e%\$}")
    elif [ $((n % mult)) -ne 0 ]; then
      problems+=("$n x ${e%\$}, not a multiple of $mult")
    else
      summary+=("${e%\$} x$n")
    fi
  done
  # %globaltimer reads per (architecture, function): "sm_90 _ZN3gpu11gemm_kernelILb1E... 30".
  timers=$(awk '/^arch = /{a=$3} /Function : /{f=a" "$3; n[f]+=0} /SR_GLOBALTIMER/{n[f]++} END{for (f in n) print f, n[f]}' <<<"$sass")
  if [[ $step == tests/* ]]; then
    :  # probes are not templates on kTrace
  elif ! grep -q 'ILb0E' <<<"$timers" || ! grep -q 'ILb1E' <<<"$timers"; then
    problems+=("no gemm_kernel<false> / <true> pair (the kernel must be a template on bool kTrace)")
  else
    on=$(awk '$2 ~ /ILb1E/ {s += $3} END{print s+0}' <<<"$timers")
    while read -r arch fn n; do problems+=("$arch: the untraced ${fn:0:40}... reads %globaltimer $n times"); done \
      < <(awk '$2 ~ /ILb0E/ && $3 > 0' <<<"$timers")
    while read -r arch fn n; do problems+=("$arch: the traced ${fn:0:40}... reads no %globaltimer"); done \
      < <(awk '$2 ~ /ILb1E/ && $3 == 0' <<<"$timers")
    summary+=("%globaltimer: kernel<false> x0, kernel<true> x$on")
  fi
  if [ ${#problems[@]} -eq 0 ]; then
    echo "ok    $step: no local memory; ${summary[*]}"
  else
    printf 'FAIL  %s:' "$step"; printf ' %s;' "${problems[@]}"; echo; bad=1
  fi
done
exit $bad
