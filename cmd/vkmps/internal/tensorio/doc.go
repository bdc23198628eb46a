// Package tensorio reads and writes the tensors of the vkmps command line:
// NumPy .npy files and PNG images in, .npy files and PNG pictures out,
// every output written atomically and never over an input.
//
// # Tensor
//
// A Tensor is float32 data in NCHW order (batch, channel, row, column; W
// varies fastest) plus the rank it came with, so that an output can
// mirror its input: rank 4 is (N,C,H,W), rank 3 is (C,H,W) with N = 1,
// rank 2 is (H,W) with N = C = 1. Rank 0 means 4.
//
// # .npy in (ReadNPY, ReadNPYFile)
//
// Format versions 1.0, 2.0 and 3.0. The header is read as numpy.load reads
// it: a Python dictionary literal (ast.literal_eval's syntax: any spacing,
// key order, quotes, comments, integer spellings, Python 2 "L" suffixes in
// versions 1.0 and 2.0) with exactly the keys 'descr', 'fortran_order' and
// 'shape'. dtype float32 or float64, in either byte order and any spelling
// numpy.dtype accepts for them ('<f4', '>f8', '=f4', '|f4', 'f4',
// 'float32', 'single', 'd', 'float64', 'double', 'float', ...), float64
// converted to float32 (a finite value beyond float32's range is an
// error, not a silent Inf); other dtypes, structured (record) dtypes
// included, are an ErrDType naming them. C order (Fortran order is
// refused, unless at most one dimension exceeds 1 so both orders agree);
// shape (N,C,H,W), (C,H,W) or (H,W) with every dimension >= 1 and at most
// MaxElements elements. The header may be at most MaxHeaderLen bytes and
// the data must be exactly as long as the header says: both are checked
// against the file size (or, for a stream, by reading no more than the
// data present) before anything the size of the tensor is allocated, so a
// header claiming a huge shape costs nothing. Trailing bytes are an error.
//
// # PNG in (ReadPNG, ReadPNGFile)
//
// One channel per stored PNG sample, values scaled to 0..1 (v/255, or
// v/65535 for 16-bit images), as a (1,C,H,W) tensor of Rank 3:
// grey → 1 channel; grey+alpha → 2 (grey, alpha); RGB → 3; RGBA → 4;
// palette → 3 (RGB), or 4 when the palette has transparency; a tRNS
// transparent colour adds an alpha channel (grey → 2, RGB → 4). Alpha is
// kept as stored, not premultiplied. Images over MaxPixels pixels, or
// that claim more pixel data than their compressed size can hold
// (decompression bombs), are refused before decoding.
//
// # .npy out (WriteNPY)
//
// Little-endian float32 ('<f4'), C order, format 2.0 (as the library
// writes it), shape by the tensor's Rank: 4, or 3 when N == 1, or 2 when
// N == C == 1.
//
// # PNG out (WritePNG, WriteHeatmapPNG)
//
// WritePNG draws a result: values are normalised over the whole tensor,
// min → 0 and max → 255 (8-bit, rounded; a constant tensor is mid grey
// 128; NaN and -Inf → 0, +Inf → 255, min and max taken over finite
// values). 1 channel → grey, 3 → RGB, 4 → RGBA (alpha normalised like the
// rest); any other channel count → a grid of grey panels, one per
// channel, ceil(sqrt(C)) columns, filled row by row.
//
// WriteHeatmapPNG draws a gradient: one panel per channel in the same
// grid, a diverging colour map with one symmetric scale s = max|v| over
// the whole tensor (finite values): -s blue (0,0,255), 0 white, +s red
// (255,0,0), linear in between; NaN green (0,255,0); an all-zero tensor
// is white.
//
// Panels and batch items are separated by 1-pixel black gaps; batch items
// (N > 1) are stacked top to bottom.
//
// # Files (Read, ReadContext, Write, WriteFile, CheckOutput)
//
// Read and Write pick the format from the extension (.npy or .png, any
// case). ReadContext reads pipes, FIFOs and /dev/stdin as streams (their
// size is what arrives), gives up waiting for a FIFO's writer or a
// pipe's data when its context is done (Ctrl-C), and shows the shape to a
// Check before the data is read or the pixels decoded, so that a caller's
// limits (a device's memory) refuse a huge input at the cost of its
// header. Every output is written to a temporary file in the destination
// directory and renamed into place, so on any error, or a panic, no
// partial output exists and an existing file at the destination is left
// as it was (a Ctrl-C that kills the process mid-write can leave a hidden
// ".NAME.tmp*" file, never a partial NAME). CheckOutput, run before any
// work, refuses an output that is an input (by cleaned absolute path, or
// os.SameFile for symbolic and hard links), a directory, or a path in a
// missing directory. Inputs are only ever opened read-only.
//
// # Errors
//
// Nothing here panics on bad input. Every problem with a file is an
// *Error naming the file and the problem, e.g.
//
//	x.npy: int64 not supported: want float32 or float64 (convert with x.astype(numpy.float32))
//
// which wraps one of the Err* sentinels for errors.Is; a missing file
// wraps fs.ErrNotExist.
package tensorio
