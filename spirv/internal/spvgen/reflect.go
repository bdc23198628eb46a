package main

import (
	"fmt"
	"sort"
	"strings"
)

// SPIR-V numbers used by the reflection (SPIR-V specification, section 3).
const (
	opName                         = 5
	opMemberName                   = 6
	opExecutionMode                = 16
	opTypeBool                     = 20
	opTypeInt                      = 21
	opTypeFloat                    = 22
	opTypeVector                   = 23
	opTypeMatrix                   = 24
	opTypeArray                    = 28
	opTypeRuntimeArray             = 29
	opTypeStruct                   = 30
	opTypePointer                  = 32
	opConstant                     = 43
	opConstantComposite            = 44
	opSpecConstantTrue             = 48
	opSpecConstantFalse            = 49
	opSpecConstant                 = 50
	opSpecConstantComposite        = 51
	opVariable                     = 59
	opDecorate                     = 71
	opMemberDecorate               = 72
	execModeLocalSize              = 17
	execModeLocalSizeID            = 38
	decSpecID                      = 1
	decBlock                       = 2
	decBufferBlock                 = 3
	decArrayStride                 = 6
	decBuiltIn                     = 11
	decNonWritable                 = 24
	decNonReadable                 = 25
	decBinding                     = 33
	decDescriptorSet               = 34
	decOffset                      = 35
	builtInWorkgroupSize           = 25
	storageUniform                 = 2
	storagePushConstant            = 9
	storageStorageBuffer           = 12
	spirvMagic              uint32 = 0x07230203
)

// Binding, SpecConstant and Module mirror the spirv package's types.
type Binding struct {
	Binding uint32
	Name    string
	Access  string // "ReadWrite", "ReadOnly" or "WriteOnly"
}

type SpecConstant struct {
	ID      uint32
	Name    string
	Default uint32
}

type Module struct {
	Bindings         []Binding
	PushConstantSize uint32
	Spec             []SpecConstant
	LocalSize        [3]uint32
	LocalSizeSpec    [3]int
}

type inst struct {
	op   uint32
	args []uint32
}

type typeInfo struct {
	op      uint32
	args    []uint32
	members []uint32
}

// Reflect reads a compute module's interface. It refuses what vkmps's
// runtime does not support: uniform buffers, descriptor sets other than 0,
// and bindings that are not dense from 0. Variables sharing a binding are
// views of one buffer and make one binding. Spec constants may have gaps in
// their IDs (the compiler drops constants a shader does not use).
func Reflect(words []uint32) (*Module, error) {
	if len(words) < 5 || words[0] != spirvMagic {
		return nil, fmt.Errorf("not a SPIR-V module")
	}
	var insts []inst
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		if n == 0 || i+n > len(words) {
			return nil, fmt.Errorf("truncated instruction at word %d", i)
		}
		insts = append(insts, inst{op: words[i] & 0xffff, args: words[i+1 : i+n]})
		i += n
	}
	names := map[uint32]string{}
	decos := map[uint32]map[uint32][]uint32{}
	memberDecos := map[uint32]map[uint32]map[uint32][]uint32{}
	types := map[uint32]typeInfo{}
	consts := map[uint32][]uint32{} // id -> value words
	specs := map[uint32]uint32{}    // id -> default
	composites := map[uint32][]uint32{}
	type variable struct{ typ, id, storage uint32 }
	var vars []variable
	m := &Module{LocalSizeSpec: [3]int{-1, -1, -1}}
	var localSizeIDs []uint32

	for _, in := range insts {
		a := in.args
		switch in.op {
		case opName:
			names[a[0]] = str(a[1:])
		case opDecorate:
			if decos[a[0]] == nil {
				decos[a[0]] = map[uint32][]uint32{}
			}
			decos[a[0]][a[1]] = a[2:]
		case opMemberDecorate:
			if memberDecos[a[0]] == nil {
				memberDecos[a[0]] = map[uint32]map[uint32][]uint32{}
			}
			if memberDecos[a[0]][a[1]] == nil {
				memberDecos[a[0]][a[1]] = map[uint32][]uint32{}
			}
			memberDecos[a[0]][a[1]][a[2]] = a[3:]
		case opTypeBool, opTypeInt, opTypeFloat, opTypeVector, opTypeMatrix, opTypeArray, opTypeRuntimeArray, opTypePointer:
			types[a[0]] = typeInfo{op: in.op, args: a[1:]}
		case opTypeStruct:
			types[a[0]] = typeInfo{op: in.op, members: a[1:]}
		case opConstant:
			consts[a[1]] = a[2:]
		case opSpecConstant:
			specs[a[1]] = a[2]
			consts[a[1]] = a[2:]
		case opSpecConstantTrue:
			specs[a[1]] = 1
		case opSpecConstantFalse:
			specs[a[1]] = 0
		case opSpecConstantComposite, opConstantComposite:
			composites[a[1]] = a[2:]
		case opVariable:
			vars = append(vars, variable{typ: a[0], id: a[1], storage: a[2]})
		case opExecutionMode:
			switch a[1] {
			case execModeLocalSize:
				m.LocalSize = [3]uint32{a[2], a[3], a[4]}
			case execModeLocalSizeID:
				localSizeIDs = a[2:5]
			}
		}
	}

	var sizeOf func(id uint32) (uint32, error)
	sizeOf = func(id uint32) (uint32, error) {
		t, ok := types[id]
		if !ok {
			return 0, fmt.Errorf("unknown type %%%d", id)
		}
		switch t.op {
		case opTypeBool:
			return 4, nil
		case opTypeInt, opTypeFloat:
			return t.args[0] / 8, nil
		case opTypeVector, opTypeMatrix:
			s, err := sizeOf(t.args[0])
			return s * t.args[1], err
		case opTypeArray:
			stride := decos[id][decArrayStride]
			n := consts[t.args[1]]
			if len(stride) == 0 || len(n) == 0 {
				return 0, fmt.Errorf("array %%%d without stride or constant length", id)
			}
			return stride[0] * n[0], nil
		case opTypeStruct:
			var end uint32
			for i, mt := range t.members {
				off := memberDecos[id][uint32(i)][decOffset]
				if len(off) == 0 {
					return 0, fmt.Errorf("struct %%%d member %d has no Offset", id, i)
				}
				s, err := sizeOf(mt)
				if err != nil {
					return 0, err
				}
				if off[0]+s > end {
					end = off[0] + s
				}
			}
			return end, nil
		}
		return 0, fmt.Errorf("type %%%d (op %d) has no fixed size", id, t.op)
	}
	allMembers := func(structID, deco uint32) bool {
		t := types[structID]
		if t.op != opTypeStruct || len(t.members) == 0 {
			return false
		}
		for i := range t.members {
			if _, ok := memberDecos[structID][uint32(i)][deco]; !ok {
				return false
			}
		}
		return true
	}

	for _, v := range vars {
		ptr := types[v.typ]
		if ptr.op != opTypePointer {
			continue
		}
		pointee := ptr.args[1]
		switch v.storage {
		case storagePushConstant:
			s, err := sizeOf(pointee)
			if err != nil {
				return nil, fmt.Errorf("push constants: %w", err)
			}
			m.PushConstantSize = s
		case storageStorageBuffer, storageUniform:
			if v.storage == storageUniform {
				if _, ok := decos[pointee][decBufferBlock]; !ok {
					return nil, fmt.Errorf("uniform buffer %q: vkmps shaders use storage buffers only", names[v.id])
				}
			}
			set, bind := decos[v.id][decDescriptorSet], decos[v.id][decBinding]
			if len(bind) == 0 {
				return nil, fmt.Errorf("buffer %q has no binding", names[v.id])
			}
			if len(set) > 0 && set[0] != 0 {
				return nil, fmt.Errorf("buffer %q is in set %d; vkmps uses set 0 only", names[v.id], set[0])
			}
			_, nw := decos[v.id][decNonWritable]
			_, nr := decos[v.id][decNonReadable]
			nw = nw || allMembers(pointee, decNonWritable)
			nr = nr || allMembers(pointee, decNonReadable)
			acc := "ReadWrite"
			switch {
			case nw && nr:
				return nil, fmt.Errorf("buffer %q is both readonly and writeonly", names[v.id])
			case nw:
				acc = "ReadOnly"
			case nr:
				acc = "WriteOnly"
			}
			name := names[v.id]
			if name == "" {
				name = names[pointee]
			}
			m.Bindings = append(m.Bindings, Binding{Binding: bind[0], Name: name, Access: acc})
		}
	}
	sort.SliceStable(m.Bindings, func(i, j int) bool { return m.Bindings[i].Binding < m.Bindings[j].Binding })
	// Several views of one binding (say float and vec2 arrays) are one
	// descriptor: merge them, the access being what any view does.
	merged := m.Bindings[:0]
	for _, b := range m.Bindings {
		if n := len(merged); n > 0 && merged[n-1].Binding == b.Binding {
			if merged[n-1].Access != b.Access {
				merged[n-1].Access = "ReadWrite"
			}
			continue
		}
		merged = append(merged, b)
	}
	m.Bindings = merged
	for i, b := range m.Bindings {
		if b.Binding != uint32(i) {
			return nil, fmt.Errorf("bindings must be dense from 0; found binding %d at position %d", b.Binding, i)
		}
	}

	for id, def := range specs {
		sid, ok := decos[id][decSpecID]
		if !ok {
			continue // a spec-constant operation result, not an input
		}
		m.Spec = append(m.Spec, SpecConstant{ID: sid[0], Name: names[id], Default: def})
	}
	sort.Slice(m.Spec, func(i, j int) bool { return m.Spec[i].ID < m.Spec[j].ID })

	setLocal := func(axis int, id uint32) {
		if sid, ok := decos[id][decSpecID]; ok {
			m.LocalSizeSpec[axis] = int(sid[0])
			m.LocalSize[axis] = specs[id]
		} else if c, ok := consts[id]; ok {
			m.LocalSize[axis] = c[0]
		}
	}
	for id, parts := range composites {
		if b, ok := decos[id][decBuiltIn]; ok && b[0] == builtInWorkgroupSize && len(parts) == 3 {
			for axis, p := range parts {
				setLocal(axis, p)
			}
		}
	}
	for axis, id := range localSizeIDs {
		setLocal(axis, id)
	}
	for i := range m.Spec {
		if m.Spec[i].Name == "" {
			for axis, sid := range m.LocalSizeSpec {
				if sid == int(m.Spec[i].ID) {
					m.Spec[i].Name = "local_size_" + string(rune('x'+axis))
				}
			}
		}
	}
	return m, nil
}

// str decodes a nul-terminated SPIR-V literal string.
func str(w []uint32) string {
	var b strings.Builder
	for _, x := range w {
		for i := 0; i < 4; i++ {
			c := byte(x >> (8 * i))
			if c == 0 {
				return b.String()
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}
