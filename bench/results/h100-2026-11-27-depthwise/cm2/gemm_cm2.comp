#version 450
// probe: D[z][M x N] (float32) = A[M x K] (half, row-major) * B[z] (half):
// B_NT: B stored N x K (k fast); else K x N (n fast).
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;

layout(push_constant) uniform PC { uint M, N, K, strideA, strideB, strideD, batchB, batchD; } pc;
layout(binding = 0) readonly buffer BA { float16_t a[]; };
layout(binding = 1) readonly buffer BB { float16_t b[]; };
layout(binding = 2) writeonly buffer BD { float d[]; };

void main() {
	uint tm = gl_WorkGroupID.y, tn = gl_WorkGroupID.x, z = gl_WorkGroupID.z;
#ifdef NOCLAMP
	tensorLayoutNV<2> lA = createTensorLayoutNV(2);
	tensorLayoutNV<2> lB = createTensorLayoutNV(2);
#else
	tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lA = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
	tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lB = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
#endif
	tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lD = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
	lA = setTensorLayoutDimensionNV(lA, pc.M, pc.K);
	lA = setTensorLayoutStrideNV(lA, pc.strideA, 1);
#ifdef B_NT
	lB = setTensorLayoutDimensionNV(lB, pc.N, pc.K);
	tensorViewNV<2, false, 1, 0> vT = createTensorViewNV(2, false, 1, 0);
#else
	lB = setTensorLayoutDimensionNV(lB, pc.K, pc.N);
#endif
	lB = setTensorLayoutStrideNV(lB, pc.strideB, 1);
	lD = setTensorLayoutDimensionNV(lD, pc.M, pc.N);
	lD = setTensorLayoutStrideNV(lD, pc.strideD, 1);
	coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc = coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
	uint bBase = z * pc.batchB;
	for (uint k = 0; k < pc.K; k += BK) {
		coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;
		coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;
		coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(lA, tm * BM, BM, k, BK));
#ifdef B_NT
		coopMatLoadTensorNV(mb, b, bBase, sliceTensorLayoutNV(lB, tn * BN, BN, k, BK), vT);
#else
		coopMatLoadTensorNV(mb, b, bBase, sliceTensorLayoutNV(lB, k, BK, tn * BN, BN));
#endif
		acc = coopMatMulAdd(ma, mb, acc);
	}
	coopMatStoreTensorNV(acc, d, z * pc.batchD, sliceTensorLayoutNV(lD, tm * BM, BM, tn * BN, BN));
}
