package padding

import (
	"fmt"
	"strings"
)

// Method is MPSNNPaddingMethod: a bit field choosing the destination size
// (Size), where the region read sits in the source (Align) and which side
// gets an odd leftover pixel of padding (AddRemainder), plus flags. The
// numeric values are MPS's (MPSNeuralNetworkTypes.h).
//
// The zero value is Valid: SizeValidOnly|AlignCentered|AddRemainderToTopLeft.
type Method uint32

// Align field (bits 0-1): where the window grid sits in the source.
const (
	// AlignCentered spreads the padding evenly before and after the image.
	AlignCentered Method = 0
	// AlignTopLeft puts the window grid flush with the top/left edge
	// (no padding before the image).
	AlignTopLeft Method = 1
	// AlignBottomRight puts the window grid flush with the bottom/right edge
	// (no padding after the image).
	AlignBottomRight Method = 2
	// AlignMask selects the Align field. Its value 3 is MPS's reserved
	// pattern (MPSNNPaddingMethodAlign_reserved) and is invalid.
	AlignMask Method = 3
)

// AddRemainder field (bits 2-3): which side gets the odd pixel when the
// padding of an axis is odd under AlignCentered. Bit 2 sends x's remainder
// to the right, bit 3 sends y's remainder to the bottom.
const (
	AddRemainderToTopLeft     Method = 0 << 2
	AddRemainderToTopRight    Method = 1 << 2 // top in y, right in x
	AddRemainderToBottomLeft  Method = 2 << 2 // bottom in y, left in x
	AddRemainderToBottomRight Method = 3 << 2
	AddRemainderToMask        Method = 3 << 2
)

// Size field: how big the destination is.
const (
	// SizeValidOnly: only windows wholly inside the source (smallest result).
	SizeValidOnly Method = 0 << 4
	// SizeSame: ceil(src/stride) pixels.
	SizeSame Method = 1 << 4
	// SizeFull: every window that touches the source (largest result).
	SizeFull Method = 2 << 4
	// SizeMask selects the Size field. MPS's mask is 0x7f0 (bits 4-10);
	// every Size value other than ValidOnly, Same and Full is reserved
	// (MPSNNPaddingMethodSize_reserved is 48) and invalid.
	SizeMask Method = 0x7f0
)

// Flags.
const (
	// CustomWhitelistForNodeFusion tells a graph that a Custom policy only
	// changes the descriptor, so nodes may still be fused. vkmps carries the
	// bit for MPS compatibility; Resolve ignores it.
	CustomWhitelistForNodeFusion Method = 1 << 13
	// Custom marks a policy whose Destination does more than return the
	// suggestion. Resolve ignores it when computing the suggestion, except
	// that an empty suggested axis is not an error for a Custom policy.
	Custom Method = 1 << 14
	// ExcludeEdges: average pooling under EdgeZero counts only taps inside
	// the padding region of each axis in N(x) (Caffe's clipped divisor).
	ExcludeEdges Method = 1 << 15
)

// Named sizes: the Size with the other bits 0 (AlignCentered,
// AddRemainderToTopLeft). MPS's default for binary kernels is Same.
const (
	Valid = SizeValidOnly
	Same  = SizeSame
	Full  = SizeFull
)

const knownBits = AlignMask | AddRemainderToMask | SizeMask |
	CustomWhitelistForNodeFusion | Custom | ExcludeEdges

// Align returns the Align field of m (m & AlignMask).
func (m Method) Align() Method { return m & AlignMask }

// Remainder returns the AddRemainder field of m (m & AddRemainderToMask).
func (m Method) Remainder() Method { return m & AddRemainderToMask }

// Size returns the Size field of m (m & SizeMask).
func (m Method) Size() Method { return m & SizeMask }

// Style returns -1, 0 or +1 for SizeValidOnly, SizeSame or SizeFull. A
// reserved Size pattern gives StyleSame; Validate reports those.
func (m Method) Style() Style {
	switch m.Size() {
	case SizeValidOnly:
		return StyleValidOnly
	case SizeFull:
		return StyleFull
	}
	return StyleSame
}

// Opposite returns m with the opposite Size (ValidOnly and Full swapped,
// Same kept), all other bits unchanged: the method a reverse filter that
// undoes a forward filter using m should use (MPSNeuralNetworkTypes.h).
func (m Method) Opposite() Method {
	switch m.Size() {
	case SizeValidOnly:
		return m&^SizeMask | SizeFull
	case SizeFull:
		return m&^SizeMask | SizeValidOnly
	}
	return m
}

// Validate reports a reserved Align pattern (3), a reserved Size pattern
// (any Size other than 0, 16, 32) or a bit MPS does not define, wrapping
// ErrInvalidMethod.
func (m Method) Validate() error {
	if m.Align() == AlignMask {
		return errorf(ErrInvalidMethod, "method %#x: reserved align pattern 3", uint32(m))
	}
	switch m.Size() {
	case SizeValidOnly, SizeSame, SizeFull:
	default:
		return errorf(ErrInvalidMethod, "method %#x: reserved size pattern %#x", uint32(m), uint32(m.Size()))
	}
	if u := m &^ knownBits; u != 0 {
		return errorf(ErrInvalidMethod, "method %#x: unknown bits %#x", uint32(m), uint32(u))
	}
	return nil
}

// String returns the fields joined by "|" in the order Size, Align,
// AddRemainder, then the flags Custom, CustomWhitelistForNodeFusion and
// ExcludeEdges that are set, then any unknown bits in hex; for example
// "SizeSame|AlignCentered|AddRemainderToBottomRight|ExcludeEdges". The
// three fields are always named, also when 0. Reserved patterns print as
// "SizeReserved(0x30)" and "AlignReserved".
func (m Method) String() string {
	parts := make([]string, 0, 6)
	switch m.Size() {
	case SizeValidOnly:
		parts = append(parts, "SizeValidOnly")
	case SizeSame:
		parts = append(parts, "SizeSame")
	case SizeFull:
		parts = append(parts, "SizeFull")
	default:
		parts = append(parts, fmt.Sprintf("SizeReserved(%#x)", uint32(m.Size())))
	}
	parts = append(parts, [...]string{"AlignCentered", "AlignTopLeft", "AlignBottomRight", "AlignReserved"}[m.Align()])
	parts = append(parts, [...]string{"AddRemainderToTopLeft", "AddRemainderToTopRight",
		"AddRemainderToBottomLeft", "AddRemainderToBottomRight"}[m.Remainder()>>2])
	if m&Custom != 0 {
		parts = append(parts, "Custom")
	}
	if m&CustomWhitelistForNodeFusion != 0 {
		parts = append(parts, "CustomWhitelistForNodeFusion")
	}
	if m&ExcludeEdges != 0 {
		parts = append(parts, "ExcludeEdges")
	}
	if u := m &^ knownBits; u != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint32(u)))
	}
	return strings.Join(parts, "|")
}

// Style is the size style of MPS's DestSize/DestSizeReverse helpers: the
// sign of the (ke-1) term in the destination size.
type Style int

const (
	StyleValidOnly Style = -1
	StyleSame      Style = 0
	StyleFull      Style = 1
)

// String returns "valid-only", "same" or "full".
func (s Style) String() string {
	switch s {
	case StyleValidOnly:
		return "valid-only"
	case StyleSame:
		return "same"
	case StyleFull:
		return "full"
	}
	return fmt.Sprintf("Style(%d)", int(s))
}
