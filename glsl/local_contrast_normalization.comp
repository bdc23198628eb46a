#version 450
// vkmps:variant f16 -DVKMPS_F16
// local_contrast_normalization (MPSCNNLocalContrastNormalization and its
// gradient): see spatial_normalization_common.glsl, KIND 1.
#extension GL_GOOGLE_include_directive : require
#define KIND 1
#include "spatial_normalization_common.glsl"
