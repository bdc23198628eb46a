#!/usr/bin/env bash
# Static operation counts of the direct argmax passes per invocation (one
# strip of 4 windows), from the SPIR-V specialised to the bench geometries
# and fully unrolled by spirv-opt: every SPIR-V instruction in the functions
# but control flow, variables, access chains, loads/stores of locals,
# composite extract/construct and phis. A proxy for the arithmetic per
# invocation, not a GPU time: the driver's compiler makes its own code.
# The fast passes are counted without their fallback (the full pass, run
# only by strips with a NaN or a border window whose maximum equals the
# outside value). Run from the repository root: bash <this file>.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() {
	spirv-opt "$1" --set-spec-const-default-value "$2" --freeze-spec-const --fold-spec-const-op-composite \
		-O --loop-unroll --fold-spec-const-op-composite -O --loop-unroll -O -o "$tmp/c.spv"
	spirv-dis "$tmp/c.spv" | awk '/OpFunction /{f=1} f' | grep -oE "Op[A-Za-z]+" |
		grep -vcE "^Op(Function|FunctionEnd|Label|Branch|BranchConditional|SelectionMerge|LoopMerge|Return|Variable|AccessChain|CompositeExtract|CompositeConstruct|Phi|Store|Load|Constant.*|Type.*)$"
}
sed 's/if (!done) fullPass(p, code);/\/\/ no fallback/' glsl/pooling_max_argmax.comp > glsl/.count_nofull.comp
trap 'rm -rf "$tmp" glsl/.count_nofull.comp' EXIT
for v in "" -DVKMPS_F16; do
	glslc -fshader-stage=compute --target-env=vulkan1.1 $v -Iglsl glsl/.count_nofull.comp -o "$tmp/nofull$v.spv"
	glslc -fshader-stage=compute --target-env=vulkan1.1 $v -Iglsl glsl/pooling_max_argmax.comp -o "$tmp/full$v.spv"
	glslc -fshader-stage=compute --target-env=vulkan1.1 $v -Iglsl glsl/pooling_max.comp -o "$tmp/plain$v.spv"
done
# KW KH SX SY DX DY VW PAR VSTORE (EdgeClamp, OX 4, 8-bit codes), as the bench's shapes pick them.
echo "geometry dtype: tap-by-tap two-phase fast-tap fast-two-phase (plain max forward)"
for g in "3 3 2 2 1 1 4 3 true|max 3x3 s2" "2 2 2 2 1 1 4 0 true|max 2x2 s2" "3 3 1 1 1 1 4 3 true|max 3x3 s1" \
	"3 3 2 2 2 2 4 2 false|dilated 3x3 d2 s2" "2 2 2 2 2 2 4 0 false|dilated 2x2 d2 s2" "3 3 1 1 2 2 4 2 false|dilated 3x3 d2 s1"; do
	set -- ${g%|*}
	s="1:$1 2:$2 3:$3 4:$4 5:$5 6:$6 7:true 8:$7 9:$8 11:8 12:true 15:4 16:$9"
	for v in "" -DVKMPS_F16; do
		dt=float32
		[ -n "$v" ] && dt=float16
		echo "${g#*|} $dt: $(count "$tmp/full$v.spv" "$s 18:false 19:false") $(count "$tmp/full$v.spv" "$s 18:true 19:false")" \
			"$(count "$tmp/nofull$v.spv" "$s 18:false 19:true") $(count "$tmp/nofull$v.spv" "$s 18:true 19:true") ($(count "$tmp/plain$v.spv" "$s"))"
	done
done
