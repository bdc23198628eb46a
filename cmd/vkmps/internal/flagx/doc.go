// Package flagx holds the flag.Value types behind vkmps's command-line
// flags (issue 7), so that every command parses them the same way and
// reports the same errors.
//
//   - PairHW: two integers in (height, width) order, for --kernel KH,KW,
//     --stride SH,SW and --dilation DH,DW.
//   - PairXY: two integers in (x, y) order, for --zero-pad X,Y. Note the
//     order: x (width) first, unlike PairHW.
//   - Quad: the four pads of --pad T,L,B,R.
//   - Choice: one of a fixed list of words, for --op, --edge, --padding.
//
// Numbers are decimal integers; spaces around them are ignored. A single
// number sets both members of a pair ("--kernel 3" is "--kernel 3,3");
// --pad takes 1 number (all sides), 2 (PH,PW: top=bottom=PH,
// left=right=PW) or 4 (T,L,B,R). Each value has a minimum (>= 1 for
// kernel, stride and dilation, >= 0 for pads) and a maximum of
// math.MaxInt32, as the kernels take 32-bit geometry. Errors name the flag
// with two dashes and quote what was given, e.g.
//
//	--kernel: "3,x" is not a number ("x")
//	--stride: 0 is too small: must be >= 1
//	--pad: "1,2,3" has 3 numbers: want T,L,B,R, PH,PW or one number
//	--op: unknown value "mux": want one of max, avg, l2, dilated-max
//
// The flag package wraps a Set error in its own words ("invalid value ...
// for flag -kernel: ..."); ParseError recovers the message above.
// Every value records whether it was set on the command line (IsSet), and
// WasSet, Require and Conflict answer the same for any flag of a
// flag.FlagSet, for checks such as "flag --pad conflicts with flag
// --padding".
package flagx
