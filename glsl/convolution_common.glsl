// Shared by the convolution shaders: the fixed geometry (specialization
// constants) and the image element type.
//
// Geometry: kernel KW x KH, stride SX, SY, dilation DX, DY. Tap (ky, kx)
// of the window of output pixel (ox, oy) reads the input at
// first + (ox*SX + kx*DX, oy*SY + ky*DY), where first (a push constant)
// is the input position of the first tap of output pixel (0, 0): MPS's
// offset - floor(ke/2), or PyTorch's -pad. Reads outside the input are 0.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"

layout(constant_id = 6) const int KW = 1;
layout(constant_id = 7) const int KH = 1;
layout(constant_id = 8) const int SX = 1;
layout(constant_id = 9) const int SY = 1;
layout(constant_id = 10) const int DX = 1;
layout(constant_id = 11) const int DY = 1;

const uint KHW = uint(KW * KH);

// convTap returns (kx*DX, ky*DY) of tap r = ky*KW + kx.
ivec2 convTap(uint r) { return ivec2(int(r % uint(KW)) * DX, int(r / uint(KW)) * DY); }
