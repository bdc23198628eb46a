// The element type of the image buffers: float32, or IEEE half in the
// "f16" variants (built with -DVKMPS_F16; see spirv/internal/spvgen).
// Half is storage only (GL_EXT_shader_16bit_storage, which needs the
// device's storageBuffer16BitAccess): values become float32 when loaded,
// arithmetic stays float32, and a result is rounded to half once, when
// stored. The float32 build expands to the same code as plain floats.
//
// ELEM, ELEM2, ELEM4: an element, an aligned pair and an aligned quad.
// LOAD(e), LOAD2(p), LOAD4(q): their float, vec2 and vec4. STORE(v),
// STORE2(v), STORE4(v): the element, pair and quad of a float, vec2, vec4.
#ifdef VKMPS_F16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#define ELEM2 f16vec2
#define ELEM4 f16vec4
#define LOAD(e) float(e)
#define LOAD2(p) vec2(p)
#define LOAD4(p) vec4(p)
#define STORE(v) float16_t(v)
#define STORE2(v) f16vec2(v)
#define STORE4(v) f16vec4(v)
#else
#define ELEM float
#define ELEM2 vec2
#define ELEM4 vec4
#define LOAD(e) (e)
#define LOAD2(p) (p)
#define LOAD4(p) (p)
#define STORE(v) (v)
#define STORE2(v) (v)
#define STORE4(v) (v)
#endif

// DST_F32: the shader's Dst buffer holds float32 scratch (the L2-norm
// gradient's ratios) rather than an image. DY_F32: its Dy buffer does.
#ifdef DST_F32
#define DST_ELEM float
#define DST_ELEM2 vec2
#define DST_ELEM4 vec4
#define STORE_DST(v) (v)
#define STORE_DST2(v) (v)
#define STORE_DST4(v) (v)
#else
#define DST_ELEM ELEM
#define DST_ELEM2 ELEM2
#define DST_ELEM4 ELEM4
#define STORE_DST(v) STORE(v)
#define STORE_DST2(v) STORE2(v)
#define STORE_DST4(v) STORE4(v)
#endif
#ifdef DY_F32
#define DY_ELEM float
#define LOAD_DY(e) (e)
#else
#define DY_ELEM ELEM
#define LOAD_DY(e) LOAD(e)
#endif
