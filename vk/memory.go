package vk

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// allocator sub-allocates buffer memory from large blocks, one list of
// blocks per memory type. Requests larger than half a block get a
// dedicated block of their own. An empty block is freed, except the last
// one of a type, which is kept for reuse.
type allocator struct {
	dev       *Device
	mu        sync.Mutex
	blockSize uint64
	types     []memType
	heaps     []heap
	blocks    map[blockKey][]*memBlock
	nextID    int
	// mapStorage: storage blocks are mapped and read and written directly
	// (unified memory); otherwise data moves through the staging ring.
	mapStorage bool
}

// blockKey: blocks are kept per memory type and use, since storage and
// staging blocks of one type differ in being mapped.
type blockKey struct {
	typeIndex uint32
	use       memoryUse
}

type memType struct {
	flags vkg.MemoryPropertyFlags
	heap  uint32
}

type heap struct {
	size, used uint64
}

type memBlock struct {
	id        int
	mem       vkg.DeviceMemory
	key       blockKey
	size      uint64
	used      uint64
	mapped    unsafe.Pointer // nil unless host-visible
	coherent  bool
	free      []span // sorted by offset, coalesced
	dedicated bool
}

type span struct{ off, size uint64 }

// allocation is a range of a block.
type allocation struct {
	block *memBlock
	off   uint64
	size  uint64
}

func newAllocator(d *Device, mp *vkg.PhysicalDeviceMemoryProperties, blockSize uint64) *allocator {
	if blockSize == 0 {
		blockSize = 64 << 20
	}
	a := &allocator{dev: d, blockSize: blockSize, blocks: map[blockKey][]*memBlock{}}
	for i := uint32(0); i < mp.MemoryHeapCount; i++ {
		mp.MemoryHeaps[i].Deref()
		a.heaps = append(a.heaps, heap{size: uint64(mp.MemoryHeaps[i].Size)})
	}
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		mp.MemoryTypes[i].Deref()
		a.types = append(a.types, memType{flags: mp.MemoryTypes[i].PropertyFlags, heap: mp.MemoryTypes[i].HeapIndex})
	}
	return a
}

const (
	memDeviceLocal  = vkg.MemoryPropertyFlags(vkg.MemoryPropertyDeviceLocalBit)
	memHostVisible  = vkg.MemoryPropertyFlags(vkg.MemoryPropertyHostVisibleBit)
	memHostCoherent = vkg.MemoryPropertyFlags(vkg.MemoryPropertyHostCoherentBit)
	memHostCached   = vkg.MemoryPropertyFlags(vkg.MemoryPropertyHostCachedBit)
)

// memoryUse says what a buffer's memory is for.
type memoryUse int

const (
	useStorage memoryUse = iota // device-local; mapped too on unified memory
	useStaging                  // host-visible, coherent, cached if possible
)

// chooseType picks a memory type among typeBits for use, best first.
func (a *allocator) chooseType(typeBits uint32, use memoryUse) (uint32, error) {
	type pref struct{ need, avoid vkg.MemoryPropertyFlags }
	var prefs []pref
	switch {
	case use == useStaging:
		prefs = []pref{
			{memHostVisible | memHostCoherent | memHostCached, 0},
			{memHostVisible | memHostCoherent, 0},
			{memHostVisible, 0},
		}
	case a.dev.info.Limits.UnifiedMemory:
		prefs = []pref{
			{memDeviceLocal | memHostVisible | memHostCoherent | memHostCached, 0},
			{memDeviceLocal | memHostVisible | memHostCoherent, 0},
		}
	default:
		prefs = []pref{
			{memDeviceLocal, memHostVisible},
			{memDeviceLocal, 0},
		}
	}
	for _, p := range prefs {
		for i, t := range a.types {
			if typeBits&(1<<uint(i)) == 0 {
				continue
			}
			if t.flags&p.need == p.need && t.flags&p.avoid == 0 {
				return uint32(i), nil
			}
		}
	}
	return 0, fmt.Errorf("%w: no suitable memory type (bits %#x)", ErrUnsupported, typeBits)
}

// alloc returns size bytes aligned to align from a memory type among
// typeBits suited to use.
func (a *allocator) alloc(size, align uint64, typeBits uint32, use memoryUse) (allocation, error) {
	ti, err := a.chooseType(typeBits, use)
	if err != nil {
		return allocation{}, err
	}
	if align == 0 {
		align = 1
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if size <= a.blockSize/2 {
		for _, b := range a.blocks[blockKey{ti, use}] {
			if b.dedicated {
				continue
			}
			if off, ok := b.take(size, align); ok {
				return allocation{block: b, off: off, size: size}, nil
			}
		}
		b, err := a.newBlock(ti, a.blockSize, false, use)
		if err != nil {
			return allocation{}, err
		}
		off, _ := b.take(size, align)
		return allocation{block: b, off: off, size: size}, nil
	}
	b, err := a.newBlock(ti, size, true, use)
	if err != nil {
		return allocation{}, err
	}
	b.take(size, 1)
	return allocation{block: b, off: 0, size: size}, nil
}

func (a *allocator) newBlock(ti uint32, size uint64, dedicated bool, use memoryUse) (*memBlock, error) {
	t := a.types[ti]
	h := &a.heaps[t.heap]
	if lim := a.dev.info.Limits.MaxMemoryAllocationSize; lim > 0 && size > lim {
		return nil, fmt.Errorf("%w: %d bytes exceed the device's largest allocation (%d bytes)", ErrOutOfDeviceMemory, size, lim)
	}
	if h.used+size > h.size {
		return nil, fmt.Errorf("%w: %d bytes asked, %d of %d bytes of the heap in use", ErrOutOfDeviceMemory, size, h.used, h.size)
	}
	ai := vkg.MemoryAllocateInfo{
		SType:           vkg.StructureTypeMemoryAllocateInfo,
		AllocationSize:  vkg.DeviceSize(size),
		MemoryTypeIndex: ti,
	}
	var mem vkg.DeviceMemory
	r := vkg.AllocateMemory(a.dev.handle, &ai, nil, &mem)
	ai.Free()
	if err := check("vkAllocateMemory", Result(r)); err != nil {
		return nil, a.dev.noteResult(err)
	}
	b := &memBlock{id: a.nextID, mem: mem, key: blockKey{ti, use}, size: size, dedicated: dedicated,
		free: []span{{0, size}}, coherent: t.flags&memHostCoherent != 0}
	a.nextID++
	if t.flags&memHostVisible != 0 && (use == useStaging || a.mapStorage) {
		var p unsafe.Pointer
		if err := check("vkMapMemory", Result(vkg.MapMemory(a.dev.handle, mem, 0, vkg.DeviceSize(size), 0, &p))); err != nil {
			vkg.FreeMemory(a.dev.handle, mem, nil)
			return nil, err
		}
		b.mapped = p
	}
	h.used += size
	a.blocks[b.key] = append(a.blocks[b.key], b)
	return b, nil
}

// take finds the first free span that holds size bytes at align.
func (b *memBlock) take(size, align uint64) (uint64, bool) {
	for i, s := range b.free {
		off := (s.off + align - 1) / align * align
		if off+size > s.off+s.size {
			continue
		}
		// Split s into [s.off, off) and [off+size, end).
		var rest []span
		if off > s.off {
			rest = append(rest, span{s.off, off - s.off})
		}
		if end := s.off + s.size; off+size < end {
			rest = append(rest, span{off + size, end - off - size})
		}
		b.free = append(b.free[:i], append(rest, b.free[i+1:]...)...)
		b.used += size
		return off, true
	}
	return 0, false
}

func (b *memBlock) give(off, size uint64) {
	i := sort.Search(len(b.free), func(i int) bool { return b.free[i].off > off })
	b.free = append(b.free, span{})
	copy(b.free[i+1:], b.free[i:])
	b.free[i] = span{off, size}
	// Coalesce with the neighbours.
	if i+1 < len(b.free) && b.free[i].off+b.free[i].size == b.free[i+1].off {
		b.free[i].size += b.free[i+1].size
		b.free = append(b.free[:i+1], b.free[i+2:]...)
	}
	if i > 0 && b.free[i-1].off+b.free[i-1].size == b.free[i].off {
		b.free[i-1].size += b.free[i].size
		b.free = append(b.free[:i], b.free[i+1:]...)
	}
	b.used -= size
}

// free returns an allocation. Empty dedicated blocks are released at once;
// an empty shared block is released unless it is the last of its type.
func (a *allocator) free(al allocation) {
	if al.block == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b := al.block
	b.give(al.off, al.size)
	if b.used != 0 {
		return
	}
	list := a.blocks[b.key]
	if !b.dedicated {
		shared := 0
		for _, o := range list {
			if !o.dedicated {
				shared++
			}
		}
		if shared <= 1 {
			return
		}
	}
	for i, o := range list {
		if o == b {
			a.blocks[b.key] = append(list[:i], list[i+1:]...)
			break
		}
	}
	a.release(b)
}

func (a *allocator) release(b *memBlock) {
	if b.mapped != nil {
		vkg.UnmapMemory(a.dev.handle, b.mem)
	}
	vkg.FreeMemory(a.dev.handle, b.mem, nil)
	a.heaps[a.types[b.key.typeIndex].heap].used -= b.size
}

// stats reports the number of blocks and the bytes allocated from Vulkan.
func (a *allocator) stats() (blocks int, bytes uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, list := range a.blocks {
		for _, b := range list {
			blocks++
			bytes += b.size
		}
	}
	return
}

func (a *allocator) destroy() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, list := range a.blocks {
		for _, b := range list {
			a.release(b)
		}
	}
	a.blocks = map[blockKey][]*memBlock{}
}

// MemoryStats describes the device memory vkmps holds.
type MemoryStats struct {
	Blocks int    // VkDeviceMemory objects
	Bytes  uint64 // their total size
}

// MemoryStats reports the device memory allocated from Vulkan.
func (d *Device) MemoryStats() MemoryStats {
	b, n := d.mem.stats()
	return MemoryStats{Blocks: b, Bytes: n}
}
