#version 450
// vkmps:variant f16 -DVKMPS_F16
// spatial_normalization (MPSCNNSpatialNormalization and its gradient):
// see spatial_normalization_common.glsl, KIND 0.
#extension GL_GOOGLE_include_directive : require
#define KIND 0
#include "spatial_normalization_common.glsl"
