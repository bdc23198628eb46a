// The element type of the image buffers: float32, or IEEE half in the
// "f16" variants (built with -DVKMPS_F16; see spirv/internal/spvgen).
// Half is storage only (GL_EXT_shader_16bit_storage, which needs the
// device's storageBuffer16BitAccess): values become float32 when loaded,
// arithmetic stays float32, and a result is rounded to half once, when
// stored. The float32 build expands to the same code as plain floats.
//
// ELEM, ELEM2: an element and an aligned pair. LOAD(e), LOAD2(p): the float
// and vec2 of an element and a pair. STORE(v): the element of float v.
#ifdef VKMPS_F16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#define ELEM2 f16vec2
#define LOAD(e) float(e)
#define LOAD2(p) vec2(p)
#define STORE(v) float16_t(v)
#else
#define ELEM float
#define ELEM2 vec2
#define LOAD(e) (e)
#define LOAD2(p) (p)
#define STORE(v) (v)
#endif

// DST_F32: the shader's Dst buffer holds float32 scratch (the L2-norm
// gradient's ratios) rather than an image. DY_F32: its Dy buffer does.
#ifdef DST_F32
#define DST_ELEM float
#define STORE_DST(v) (v)
#else
#define DST_ELEM ELEM
#define STORE_DST(v) STORE(v)
#endif
#ifdef DY_F32
#define DY_ELEM float
#define LOAD_DY(e) (e)
#else
#define DY_ELEM ELEM
#define LOAD_DY(e) LOAD(e)
#endif
