//go:build view && linux && !wayland

package view

/*
#cgo LDFLAGS: -lX11
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int grab_failed;

static int grab_error(Display* d, XErrorEvent* e) {
	(void)d;
	(void)e;
	grab_failed = 1;
	return 0;
}

static int mask_shift(unsigned long m) {
	int s = 0;
	while (m && !(m & 1)) {
		m >>= 1;
		s++;
	}
	return s;
}

// vkmps_grab copies w x h pixels of window win as R, G, B, A bytes into
// out; it returns 0 when the server refuses (the window not viewable).
static int vkmps_grab(void* display, unsigned long win, int w, int h, unsigned char* out) {
	Display* d = (Display*)display;
	XSync(d, False);
	grab_failed = 0;
	int (*old)(Display*, XErrorEvent*) = XSetErrorHandler(grab_error);
	XImage* im = XGetImage(d, (Window)win, 0, 0, (unsigned)w, (unsigned)h, AllPlanes, ZPixmap);
	XSync(d, False);
	XSetErrorHandler(old);
	if (im == NULL || grab_failed) {
		if (im != NULL) XDestroyImage(im);
		return 0;
	}
	int rs = mask_shift(im->red_mask), gs = mask_shift(im->green_mask), bs = mask_shift(im->blue_mask);
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			unsigned long p = XGetPixel(im, x, y);
			unsigned char* o = out + 4 * ((size_t)y * w + x);
			o[0] = (unsigned char)((p & im->red_mask) >> rs);
			o[1] = (unsigned char)((p & im->green_mask) >> gs);
			o[2] = (unsigned char)((p & im->blue_mask) >> bs);
			o[3] = 255;
		}
	}
	XDestroyImage(im);
	return 1;
}

// vkmps_send_key sends a key press and release of keysym (with shift) to
// window win, as a keyboard would: glfw reads them like typed keys.
static int vkmps_send_key(void* display, unsigned long win, const char* keysym, int shift) {
	Display* d = (Display*)display;
	KeySym sym = XStringToKeysym(keysym);
	if (sym == NoSymbol) return 0;
	KeyCode code = XKeysymToKeycode(d, sym);
	if (code == 0) return 0;
	XKeyEvent ev;
	memset(&ev, 0, sizeof(ev));
	ev.display = d;
	ev.window = (Window)win;
	ev.root = DefaultRootWindow(d);
	ev.subwindow = None;
	ev.time = CurrentTime;
	ev.x = ev.y = ev.x_root = ev.y_root = 1;
	ev.same_screen = True;
	ev.keycode = code;
	ev.state = shift ? ShiftMask : 0;
	ev.type = KeyPress;
	XSendEvent(d, (Window)win, True, KeyPressMask, (XEvent*)&ev);
	ev.type = KeyRelease;
	XSendEvent(d, (Window)win, True, KeyReleaseMask, (XEvent*)&ev);
	XFlush(d);
	return 1;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"image"
	"unicode"
	"unsafe"

	"github.com/go-gl/glfw/v3.3/glfw"
)

// grabWindow reads the window's pixels from the X server: what is shown,
// after presentation.
func grabWindow(win *glfw.Window, w, h int) (*image.RGBA, error) {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	d := unsafe.Pointer(glfw.GetX11Display())
	if C.vkmps_grab(d, C.ulong(uint64(win.GetX11Window())), C.int(w), C.int(h), (*C.uchar)(unsafe.Pointer(&im.Pix[0]))) == 0 {
		return nil, errors.New("XGetImage failed")
	}
	return im, nil
}

// x11Keysyms names the keysyms of the named keys.
var x11Keysyms = map[string]string{"escape": "Escape", "tab": "Tab", "up": "Up", "down": "Down", "left": "Left", "right": "Right"}

// sendKey sends key (a character as typed, or a name) to the window as X
// key events, which glfw then reads as it reads a keyboard.
func sendKey(win *glfw.Window, key string) error {
	sym, shift := x11Keysyms[key], false
	if sym == "" {
		r := []rune(key)
		if len(r) != 1 || r[0] > 127 {
			return fmt.Errorf("no X11 key for %q", key)
		}
		sym, shift = key, unicode.IsUpper(r[0])
		if unicode.IsUpper(r[0]) {
			sym = string(unicode.ToLower(r[0])) // the key; shift makes it upper case
		}
	}
	cs := C.CString(sym)
	defer C.free(unsafe.Pointer(cs))
	d := unsafe.Pointer(glfw.GetX11Display())
	shiftC := C.int(0)
	if shift {
		shiftC = 1
	}
	if C.vkmps_send_key(d, C.ulong(uint64(win.GetX11Window())), cs, shiftC) == 0 {
		return fmt.Errorf("no X11 keycode for %q", key)
	}
	return nil
}
