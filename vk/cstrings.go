package vk

/*
#include <stdlib.h>
*/
import "C"

import "unsafe"

// cStrings copies ss into a C array of C strings; free releases both.
func cStrings(ss []string) (arr **C.char, free func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	size := C.size_t(len(ss)) * C.size_t(unsafe.Sizeof(uintptr(0)))
	p := (**C.char)(C.malloc(size))
	items := unsafe.Slice(p, len(ss))
	for i, s := range ss {
		items[i] = C.CString(s)
	}
	return p, func() {
		for _, c := range items {
			C.free(unsafe.Pointer(c))
		}
		C.free(unsafe.Pointer(p))
	}
}

// names decodes n 256-byte nul-terminated records.
func names(buf []byte, n int) map[string]bool {
	out := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		rec := buf[256*i : 256*(i+1)]
		end := 0
		for end < len(rec) && rec[end] != 0 {
			end++
		}
		out[string(rec[:end])] = true
	}
	return out
}
