package tensorio

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The .npy header is a Python dictionary literal that numpy.load reads
// with ast.literal_eval. pyParse reads the part of Python's literal syntax
// such a header can use, as Python does: strings in single or double
// quotes (with the prefixes u, r and b, adjacent strings concatenated,
// the usual escapes), integers (decimal, 0x, 0o, 0b, underscores, a
// unary sign; with py2, a Python 2 "L" suffix, which numpy strips from
// format 1.0 and 2.0 headers), floats, True, False, None, tuples, lists
// and dictionaries (duplicate keys: the last wins), whitespace, line
// continuations and comments anywhere a token may be separated.

// pyKind is the type of a Python value.
type pyKind int

const (
	pyStr pyKind = iota
	pyBytes
	pyInt
	pyFloat
	pyBool
	pyNone
	pyTuple
	pyList
	pyDict
	pySet
)

func (k pyKind) String() string {
	return [...]string{"str", "bytes", "int", "float", "bool", "NoneType", "tuple", "list", "dict", "set"}[k]
}

// pyValue is a parsed literal; src is its text, for messages.
type pyValue struct {
	kind  pyKind
	str   string    // pyStr, pyBytes
	num   *big.Int  // pyInt
	b     bool      // pyBool
	items []pyValue // pyTuple, pyList, pySet; pyDict: key, value, key, value ...
	src   string
}

// get returns the value of the last entry of dictionary v with string
// key k.
func (v pyValue) get(k string) (pyValue, bool) {
	var out pyValue
	found := false
	for i := 0; i+1 < len(v.items); i += 2 {
		if key := v.items[i]; key.kind == pyStr && key.str == k {
			out, found = v.items[i+1], true
		}
	}
	return out, found
}

// keys returns the distinct keys of dictionary v, as Python prints them,
// in order of first appearance.
func (v pyValue) keys() []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(v.items); i += 2 {
		k := v.items[i].src
		if v.items[i].kind == pyStr {
			k = strconv.Quote(v.items[i].str)
			k = "'" + strings.ReplaceAll(k[1:len(k)-1], `\"`, `"`) + "'"
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// pyParser reads one literal.
type pyParser struct {
	s   string
	i   int
	py2 bool // accept Python 2 long suffixes
	// depth bounds nesting, so that a hostile header cannot exhaust the
	// stack.
	depth int
}

const pyMaxDepth = 64

// pyParse parses s as one Python literal.
func pyParse(s string, py2 bool) (pyValue, error) {
	p := &pyParser{s: s, py2: py2}
	p.skip()
	v, err := p.value()
	if err != nil {
		return v, err
	}
	p.skip()
	if p.i < len(p.s) {
		if p.s[p.i] == ',' { // "{...}, x" is a tuple, not a dictionary
			return pyValue{kind: pyTuple, src: s}, nil
		}
		return v, p.errorf("unexpected %s after the literal", p.near())
	}
	return v, nil
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("cannot parse the header dictionary at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

// near quotes the text at the parser's position.
func (p *pyParser) near() string {
	if p.i >= len(p.s) {
		return "end of header"
	}
	t := p.s[p.i:]
	if len(t) > 12 {
		t = t[:12] + "..."
	}
	return strconv.Quote(t)
}

// skip passes whitespace, comments and line continuations.
func (p *pyParser) skip() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			p.i++
		case c == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n':
			p.i += 2
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *pyParser) value() (pyValue, error) {
	if p.i >= len(p.s) {
		return pyValue{}, p.errorf("unexpected end of header")
	}
	start := p.i
	var v pyValue
	var err error
	switch c := p.s[p.i]; {
	case c == '{', c == '(', c == '[':
		p.depth++
		if p.depth > pyMaxDepth {
			return v, p.errorf("nested more than %d deep", pyMaxDepth)
		}
		v, err = p.container(c)
		p.depth--
	case c == '\'' || c == '"' || isStrPrefix(p.s[p.i:]):
		v, err = p.strings()
	case c == '+' || c == '-':
		p.i++
		p.skip()
		p.depth++
		if p.depth > pyMaxDepth {
			return v, p.errorf("nested more than %d deep", pyMaxDepth)
		}
		v, err = p.value()
		p.depth--
		if err == nil && v.kind != pyInt && v.kind != pyFloat && v.kind != pyBool {
			err = p.errorf("sign before a %s", v.kind)
		}
		if err == nil && c == '-' && v.kind == pyInt {
			v.num.Neg(v.num)
		}
		if v.kind == pyBool { // -True is the int -1
			n := int64(0)
			if v.b {
				n = 1
			}
			if c == '-' {
				n = -n
			}
			v = pyValue{kind: pyInt, num: big.NewInt(n)}
		}
	case c >= '0' && c <= '9' || c == '.':
		v, err = p.number()
	case isIdentStart(c):
		j := p.i
		for j < len(p.s) && isIdentChar(p.s[j]) {
			j++
		}
		switch name := p.s[p.i:j]; name {
		case "True", "False":
			v = pyValue{kind: pyBool, b: name == "True"}
		case "None":
			v = pyValue{kind: pyNone}
		default:
			return v, p.errorf("%q is not a literal", name)
		}
		p.i = j
	default:
		return v, p.errorf("unexpected %s", p.near())
	}
	if err != nil {
		return v, err
	}
	v.src = strings.TrimSpace(p.s[start:p.i])
	return v, nil
}

// container reads a tuple, list, dictionary or set; open is its bracket.
func (p *pyParser) container(open byte) (pyValue, error) {
	closeBy := map[byte]byte{'(': ')', '[': ']', '{': '}'}[open]
	p.i++
	v := pyValue{kind: map[byte]pyKind{'(': pyTuple, '[': pyList, '{': pyDict}[open]}
	commas := 0
	for {
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == closeBy {
			p.i++
			break
		}
		item, err := p.value()
		if err != nil {
			return v, err
		}
		p.skip()
		if open == '{' {
			if len(v.items) == 0 && (p.i >= len(p.s) || p.s[p.i] != ':') {
				v.kind = pySet
			}
			if v.kind == pyDict {
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return v, p.errorf("want ':' after a dictionary key, got %s", p.near())
				}
				p.i++
				p.skip()
				val, err := p.value()
				if err != nil {
					return v, err
				}
				if item.kind == pyList || item.kind == pyDict || item.kind == pySet {
					return v, p.errorf("unhashable dictionary key %s", item.src)
				}
				v.items = append(v.items, item, val)
				p.skip()
			} else {
				v.items = append(v.items, item)
			}
		} else {
			v.items = append(v.items, item)
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			commas++
			continue
		}
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == closeBy {
			p.i++
			break
		}
		return v, p.errorf("want ',' or '%c', got %s", closeBy, p.near())
	}
	// (x) is x, not a tuple; (x,) and () are tuples.
	if open == '(' && len(v.items) == 1 && commas == 0 {
		return v.items[0], nil
	}
	return v, nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

// isStrPrefix reports whether s starts with a string prefix and a quote.
func isStrPrefix(s string) bool {
	for n := 1; n <= 2 && n < len(s); n++ {
		if s[n] == '\'' || s[n] == '"' {
			switch strings.ToLower(s[:n]) {
			case "u", "r", "b", "br", "rb":
				return true
			}
			return false
		}
	}
	return false
}

// strings reads one or more adjacent string literals, concatenated.
func (p *pyParser) strings() (pyValue, error) {
	v := pyValue{kind: pyStr}
	for n := 0; ; n++ {
		if p.i >= len(p.s) || !(p.s[p.i] == '\'' || p.s[p.i] == '"' || isStrPrefix(p.s[p.i:])) {
			return v, nil
		}
		s, bytesLit, err := p.str()
		if err != nil {
			return v, err
		}
		if n > 0 && bytesLit != (v.kind == pyBytes) {
			return v, p.errorf("cannot mix bytes and str literals")
		}
		if bytesLit {
			v.kind = pyBytes
		}
		v.str += s
		p.skip()
	}
}

// str reads one string literal.
func (p *pyParser) str() (string, bool, error) {
	raw, bytesLit := false, false
	for p.s[p.i] != '\'' && p.s[p.i] != '"' {
		switch p.s[p.i] {
		case 'r', 'R':
			raw = true
		case 'b', 'B':
			bytesLit = true
		}
		p.i++
	}
	q := p.s[p.i]
	triple := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	if triple {
		p.i += 3
	} else {
		p.i++
	}
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", false, p.errorf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case triple && strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)):
			p.i += 3
			return b.String(), bytesLit, nil
		case !triple && c == q:
			p.i++
			return b.String(), bytesLit, nil
		case !triple && c == '\n':
			return "", false, p.errorf("newline in a string")
		case c == '\\' && p.i+1 < len(p.s):
			if raw {
				b.WriteString(p.s[p.i : p.i+2])
				p.i += 2
				continue
			}
			if err := p.escape(&b, bytesLit); err != nil {
				return "", false, err
			}
		default:
			if bytesLit && c >= 0x80 {
				return "", false, p.errorf("non-ASCII character in a bytes literal")
			}
			b.WriteByte(c)
			p.i++
		}
	}
}

// escape reads one backslash escape into b.
func (p *pyParser) escape(b *strings.Builder, bytesLit bool) error {
	c := p.s[p.i+1]
	p.i += 2
	simple := map[byte]string{'\n': "", '\\': `\`, '\'': `'`, '"': `"`, 'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v"}
	if s, ok := simple[c]; ok {
		b.WriteString(s)
		return nil
	}
	hex := func(n int) (uint64, error) {
		if p.i+n > len(p.s) {
			return 0, p.errorf("truncated \\%c escape", c)
		}
		v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
		if err != nil {
			return 0, p.errorf("bad \\%c escape", c)
		}
		p.i += n
		return v, nil
	}
	switch {
	case c >= '0' && c <= '7':
		v := uint64(c - '0')
		for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
			v = v*8 + uint64(p.s[p.i]-'0')
			p.i++
		}
		writeCode(b, v, bytesLit)
	case c == 'x':
		v, err := hex(2)
		if err != nil {
			return err
		}
		writeCode(b, v, bytesLit)
	case (c == 'u' || c == 'U') && !bytesLit:
		n := 4
		if c == 'U' {
			n = 8
		}
		v, err := hex(n)
		if err != nil {
			return err
		}
		if v > utf8.MaxRune {
			return p.errorf("\\U escape beyond Unicode")
		}
		b.WriteRune(rune(v))
	default: // Python keeps unknown escapes as they are
		b.WriteByte('\\')
		b.WriteByte(c)
	}
	return nil
}

func writeCode(b *strings.Builder, v uint64, bytesLit bool) {
	if bytesLit {
		b.WriteByte(byte(v))
	} else {
		b.WriteRune(rune(v))
	}
}

// number reads an integer or a float.
func (p *pyParser) number() (pyValue, error) {
	j := p.i
	for j < len(p.s) && (isIdentChar(p.s[j]) || p.s[j] == '.' ||
		(p.s[j] == '+' || p.s[j] == '-') && j > p.i && (p.s[j-1] == 'e' || p.s[j-1] == 'E') && !strings.HasPrefix(strings.ToLower(p.s[p.i:]), "0x")) {
		j++
	}
	text := p.s[p.i:j]
	t := text
	if p.py2 && len(t) > 1 && (t[len(t)-1] == 'L' || t[len(t)-1] == 'l') {
		t = t[:len(t)-1]
	}
	if n, ok := pyInteger(t); ok {
		p.i = j
		return pyValue{kind: pyInt, num: n}, nil
	}
	if strings.ContainsAny(t, "xXoObB") {
		return pyValue{}, p.errorf("%q is not a number", text)
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64); err == nil && !strings.HasPrefix(t, "_") && !strings.HasSuffix(t, "_") {
		p.i = j
		return pyValue{kind: pyFloat}, nil
	}
	return pyValue{}, p.errorf("%q is not a number", text)
}

// pyInteger parses a Python 3 integer literal.
func pyInteger(t string) (*big.Int, bool) {
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return nil, false
	}
	base, digits := 10, t
	if len(t) > 2 && t[0] == '0' {
		switch t[1] {
		case 'x', 'X':
			base, digits = 16, t[2:]
		case 'o', 'O':
			base, digits = 8, t[2:]
		case 'b', 'B':
			base, digits = 2, t[2:]
		}
	}
	digits = strings.TrimPrefix(digits, "_")
	digits = strings.ReplaceAll(digits, "_", "")
	if digits == "" {
		return nil, false
	}
	if base == 10 && len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" {
		return nil, false // leading zeros are a syntax error in Python 3
	}
	if len(digits) > 100 {
		return nil, false
	}
	n, ok := new(big.Int).SetString(digits, base)
	return n, ok
}
