#include "loader.h"
#include <stddef.h>

void* vkmps_gipa = NULL;

#if defined(_WIN32)
#include <windows.h>
static const char* names[] = {"vulkan-1.dll", NULL};
static void* open_lib(const char* n) { return (void*)LoadLibraryA(n); }
static void* sym(void* lib, const char* s) { return (void*)GetProcAddress((HMODULE)lib, s); }
#else
#include <dlfcn.h>
#if defined(__APPLE__)
static const char* names[] = {"libvulkan.1.dylib", "libvulkan.dylib", "libMoltenVK.dylib",
                              "/usr/local/lib/libvulkan.1.dylib", "/opt/homebrew/lib/libvulkan.1.dylib", NULL};
#else
static const char* names[] = {"libvulkan.so.1", "libvulkan.so", NULL};
#endif
static void* open_lib(const char* n) { return dlopen(n, RTLD_NOW | RTLD_LOCAL); }
static void* sym(void* lib, const char* s) { return dlsym(lib, s); }
#endif

static void* try_lib(const char* n) {
	void* lib = open_lib(n);
	if (lib == NULL) return NULL;
	return sym(lib, "vkGetInstanceProcAddr");
}

void* vkmps_load(const char* path, const char** name) {
	if (vkmps_gipa != NULL) return vkmps_gipa;
	if (path != NULL) {
		vkmps_gipa = try_lib(path);
		*name = path;
		return vkmps_gipa;
	}
	for (int i = 0; names[i] != NULL; i++) {
		void* f = try_lib(names[i]);
		if (f == NULL) continue;
		vkmps_gipa = f;
		*name = names[i];
		return f;
	}
	return NULL;
}
