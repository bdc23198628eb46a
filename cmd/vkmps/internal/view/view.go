//go:build view

package view

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"log"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/go-gl/glfw/v3.3/glfw"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/panels"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vkenv"
)

// Errors of Run that the command turns into their own messages.
var (
	// ErrNoDisplay: no window can be opened (no X server or Wayland
	// compositor, or $DISPLAY unset).
	ErrNoDisplay = errors.New("no display")
	// ErrCannotPresent: a window opened but Vulkan cannot show anything in
	// it (no surface extension, or the device cannot present to it).
	ErrCannotPresent = errors.New("the Vulkan device cannot present to a window here")
	// ErrMismatch: with Config.Check, what was shown differs from the CPU
	// reference's drawing.
	ErrMismatch = errors.New("the window differs from the CPU reference")
)

// Config is what Run shows and how.
type Config struct {
	Device        string       // device selector (vk.Options.Device)
	Shape         panels.Shape // the picture
	Data          []float32    // its values, NCHW
	Name          string       // the picture's name, for the title
	Width, Height int          // window size in screen coordinates
	NoVSync       bool         // MAILBOX or IMMEDIATE where offered
	Keys          []string     // scripted keys, one applied per frame (test mode)
	KeysViaX11    bool         // send Keys to the window as X key events, read back through glfw
	Frames        int          // stop once this many frames were presented and Keys are done; 0: when the window closes
	Screenshot    string       // write the last frame here as PNG
	Check         bool         // compare the last frame with the CPU reference
	Log           io.Writer    // progress lines (nil: none)
	CloseDevice   func(*vk.Device) error
}

// Result says what Run showed.
type Result struct {
	Frames   int
	Settings panels.Settings
	Source   string // where the screenshot came from: "x11" or "swapchain"
	// Mismatch is the comparison of the last frame with the reference,
	// with Check: for the window's pixels as the X server has them (when
	// it could read them), and for the swapchain image.
	Window, Swapchain *panels.Mismatch
}

// Tolerance is the per-channel difference Check allows (normalisation
// rounding; see panels.Compare).
const Tolerance = 2

// Run opens the window and shows the picture until the window closes, q
// or Escape is pressed, or Frames frames were presented. It must run on
// the main OS thread (the command locks it in init).
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	defer func() {
		// go-gl/glfw panics on GLFW errors outside Init and CreateWindow.
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("glfw: %w", e)
			} else {
				err = fmt.Errorf("glfw: %v", r)
			}
		}
	}()
	if cfg.Width < 1 || cfg.Height < 1 {
		cfg.Width, cfg.Height = 1184, 400
	}
	if cfg.CloseDevice == nil {
		cfg.CloseDevice = (*vk.Device).Close
	}
	if err := platform(glfw.Init); err != nil {
		return res, fmt.Errorf("%w: %v", ErrNoDisplay, err)
	}
	defer glfw.Terminate()
	if !glfw.VulkanSupported() {
		return res, fmt.Errorf("%w: glfw found no Vulkan loader", ErrCannotPresent)
	}
	glfw.WindowHint(glfw.ClientAPI, glfw.NoAPI)
	var win *glfw.Window
	err = platform(func() (err error) {
		win, err = glfw.CreateWindow(cfg.Width, cfg.Height, "vkmps view", nil, nil)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrNoDisplay, err)
	}
	defer win.Destroy()
	exts := win.GetRequiredInstanceExtensions()
	if len(exts) == 0 {
		return res, fmt.Errorf("%w: no Vulkan surface extension for this window system", ErrCannotPresent)
	}
	dev, err := vkenv.Open(vk.Options{Device: cfg.Device, Present: true, InstanceExtensions: exts})
	if err != nil {
		if errors.Is(err, vk.ErrUnsupported) {
			return res, fmt.Errorf("%w: %v", ErrCannotPresent, err)
		}
		return res, err
	}
	defer func() {
		if cerr := cfg.CloseDevice(dev); err == nil {
			err = cerr
		}
	}()
	v := &viewer{cfg: cfg, win: win, dev: dev}
	defer v.close()
	if err := v.open(ctx); err != nil {
		return res, err
	}
	return v.loop(ctx)
}

// platform runs a glfw call that may fail with a platform error: go-gl
// logs those (with the standard logger) and returns nil, so that glfw.Init
// without a display "succeeds". The log output is the error.
func platform(call func() error) error {
	var buf bytes.Buffer
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	log.SetFlags(0)
	err := call()
	log.SetOutput(out)
	log.SetFlags(flags)
	if err != nil {
		return err
	}
	if msg := strings.TrimSpace(buf.String()); msg != "" {
		return errors.New(strings.ReplaceAll(msg, "\n", "; "))
	}
	return nil
}

// viewer is the window's state.
type viewer struct {
	cfg    Config
	win    *glfw.Window
	dev    *vk.Device
	sc     *vk.Swapchain
	r      *panels.Renderer
	status string // the last update's error, shown in the title
	keys   []string
	dirty  bool
	quit   bool

	sent, got int       // keys sent as X events, and received by the callbacks
	sentAt    time.Time // when the last one was sent

	wantW, wantH int       // a scripted resize not yet in the swapchain
	wantSince    time.Time // when it was asked for

	rb     *vk.Buffer // swapchain readback, with Screenshot or Check
	layout panels.Layout
}

func (v *viewer) open(ctx context.Context) error {
	ptr, err := v.win.CreateWindowSurface((*byte)(v.dev.InstanceHandle()), nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCannotPresent, err)
	}
	surface := vk.SurfaceFromPointer(ptr)
	runtime.KeepAlive(ptr)
	fw, fh := v.win.GetFramebufferSize()
	capture := v.cfg.Screenshot != "" || v.cfg.Check
	v.sc, err = v.dev.NewSwapchain(surface, vk.SwapchainOptions{Width: fw, Height: fh, NoVSync: v.cfg.NoVSync,
		Readback: capture, Label: "view swapchain"})
	if err != nil {
		if errors.Is(err, vk.ErrUnsupported) {
			return fmt.Errorf("%w: %v", ErrCannotPresent, err)
		}
		return err
	}
	if v.r, err = panels.NewRenderer(ctx, v.dev, v.cfg.Shape, v.cfg.Data); err != nil {
		return err
	}
	if err := v.r.Update(ctx, panels.Defaults()); err != nil {
		return fmt.Errorf("the picture %v: %w", v.cfg.Shape, err)
	}
	v.win.SetCharCallback(func(_ *glfw.Window, r rune) {
		if r < 128 {
			v.keys = append(v.keys, string(r))
			v.got++
		}
	})
	v.win.SetKeyCallback(func(_ *glfw.Window, key glfw.Key, _ int, action glfw.Action, mods glfw.ModifierKey) {
		if action == glfw.Release {
			return
		}
		if tok := keyToken(key, mods); tok != "" {
			v.keys = append(v.keys, tok)
			v.got++
		}
	})
	v.win.SetFramebufferSizeCallback(func(_ *glfw.Window, w, h int) {
		v.sc.Resize(w, h)
		v.dirty = true
	})
	v.win.SetRefreshCallback(func(*glfw.Window) { v.dirty = true })
	v.dirty = true
	v.setTitle()
	return nil
}

// keyToken names the special keys Settings.Key understands; characters
// come from the char callback, which applies the keyboard layout and
// shift.
func keyToken(key glfw.Key, mods glfw.ModifierKey) string {
	switch key {
	case glfw.KeyEscape:
		return "escape"
	case glfw.KeyTab:
		if mods&glfw.ModShift != 0 {
			return "O"
		}
		return "tab"
	case glfw.KeyUp:
		return "up"
	case glfw.KeyDown:
		return "down"
	case glfw.KeyLeft:
		return "left"
	case glfw.KeyRight:
		return "right"
	}
	return ""
}

// press applies one key: the settings change, the kernels run again at
// once, and the title follows.
func (v *viewer) press(ctx context.Context, key string) error {
	s := v.r.Settings()
	changed, quit := s.Key(key)
	if quit {
		v.quit = true
		return nil
	}
	if !changed {
		return nil
	}
	v.status = ""
	if err := v.r.Update(ctx, s); err != nil {
		if ctx.Err() != nil || errors.Is(err, vk.ErrDeviceLost) {
			return err
		}
		// Settings the picture cannot take: say so, keep the last ones.
		v.status = fmt.Sprintf("cannot %v: %v", s, err)
	}
	v.dirty = true
	v.setTitle()
	if v.status != "" {
		v.logf("key %q: %s", key, v.status)
	} else {
		v.logf("key %q: %v", key, v.r.Settings())
	}
	return nil
}

func (v *viewer) setTitle() {
	xs, ys := v.r.Shapes()
	t := fmt.Sprintf("vkmps view: %v | %s %dx%d -> %dx%d | %s", v.r.Settings(), v.cfg.Name, xs.W, xs.H, ys.W, ys.H, v.dev.Info().Name)
	if v.status != "" {
		t += " | " + v.status
	}
	v.win.SetTitle(t + " | keys: " + panels.KeyHelp)
}

func (v *viewer) logf(format string, args ...any) {
	if v.cfg.Log != nil {
		fmt.Fprintf(v.cfg.Log, format+"\n", args...)
	}
}

// ParseSize parses a script's resize step, "size=WxH".
func ParseSize(step string) (w, h int, ok bool) {
	rest, found := strings.CutPrefix(step, "size=")
	if !found {
		return 0, 0, false
	}
	if n, err := fmt.Sscanf(rest, "%dx%d", &w, &h); n != 2 || err != nil || w < 1 || h < 1 {
		return 0, 0, false
	}
	return w, h, true
}

// step runs one script step: a key, or a resize of the window.
func (v *viewer) step(tok string) error {
	if w, h, ok := ParseSize(tok); ok {
		// Through the window system: glfw's size callback tells the
		// swapchain, whose next Present rebuilds it.
		v.win.SetSize(w, h)
		v.wantW, v.wantH, v.wantSince = w, h, time.Now()
		v.logf("window size %dx%d", w, h)
		return nil
	}
	if !v.cfg.KeysViaX11 {
		v.keys = append(v.keys, tok)
		return nil
	}
	// Through the X server and glfw's callbacks, as typed; a later
	// PollEvents delivers it.
	if err := sendKey(v.win, tok); err != nil {
		return err
	}
	v.sent++
	v.sentAt = time.Now()
	return nil
}

// settled reports whether the swapchain has the size a script step asked
// for (true when none was asked).
func (v *viewer) settled() (bool, error) {
	if v.wantW == 0 {
		return true, nil
	}
	if w, h := v.sc.Extent(); w == v.wantW && h == v.wantH {
		v.wantW, v.wantH = 0, 0
		return true, nil
	}
	if time.Since(v.wantSince) > 5*time.Second {
		w, h := v.sc.Extent()
		return false, fmt.Errorf("the window did not take the size %dx%d (the swapchain is %dx%d)", v.wantW, v.wantH, w, h)
	}
	return false, nil
}

// scripted reports whether the run is a test run that stops by itself.
func (v *viewer) scripted() bool { return len(v.cfg.Keys) > 0 || v.cfg.Frames > 0 }

func (v *viewer) loop(ctx context.Context) (Result, error) {
	var res Result
	script := v.cfg.Keys
	for !v.quit && !v.win.ShouldClose() {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		switch {
		case v.scripted() || v.dirty:
			glfw.PollEvents()
		default:
			glfw.WaitEventsTimeout(0.5)
		}
		// Scripted keys go through the same path as typed ones, one per
		// presented frame.
		settled, err := v.settled()
		if err != nil {
			return res, err
		}
		if len(script) > 0 && res.Frames > 0 && !v.dirty && len(v.keys) == 0 && v.sent == v.got && settled {
			if err := v.step(script[0]); err != nil {
				return res, err
			}
			script = script[1:]
		}
		if v.sent > v.got && time.Since(v.sentAt) > 5*time.Second {
			return res, fmt.Errorf("a key sent to the window as an X event did not arrive")
		}
		for len(v.keys) > 0 && !v.quit {
			k := v.keys[0]
			v.keys = v.keys[1:]
			if err := v.press(ctx, k); err != nil {
				return res, err
			}
		}
		if v.quit {
			break
		}
		if v.scripted() {
			// Keep presenting after the script, and while a resize settles.
			v.dirty = v.dirty || len(script) == 0 || !settled
		}
		if !v.dirty {
			continue
		}
		presented, err := v.draw(ctx)
		if err != nil {
			return res, err
		}
		if !presented {
			if w, _ := v.sc.Extent(); w == 0 {
				glfw.WaitEventsTimeout(0.1) // minimised: wait for a size
			}
			continue
		}
		v.dirty = false
		res.Frames++
		if v.cfg.Frames > 0 && res.Frames >= v.cfg.Frames && len(script) == 0 && v.sent == v.got && settled {
			break
		}
	}
	res.Settings = v.r.Settings()
	if v.cfg.Screenshot != "" || v.cfg.Check {
		if err := v.capture(ctx, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// draw renders the canvas at the swapchain's extent and presents it.
func (v *viewer) draw(ctx context.Context) (bool, error) {
	w, h := v.sc.Extent()
	if w == 0 || h == 0 {
		// Minimised, or a resize pending: Present rebuilds.
		return v.sc.Present(ctx, vk.PresentDesc{})
	}
	cb, err := v.dev.NewCommandBuffer(vk.WithLabel("view frame"))
	if err != nil {
		return false, err
	}
	defer cb.Close()
	pix, l, err := v.r.Draw(cb, w, h, v.sc.PixelOrder())
	if err != nil {
		return false, err
	}
	if err := cb.Commit(); err != nil {
		return false, err
	}
	desc := vk.PresentDesc{Src: pix, Width: w, Height: h}
	if v.cfg.Screenshot != "" || v.cfg.Check {
		size := uint64(w) * uint64(h) * 4
		if v.rb == nil || v.rb.Size() < size {
			v.rb.Close()
			if v.rb, err = v.dev.NewHostBuffer(size, "view readback"); err != nil {
				return false, err
			}
		}
		desc.Readback = v.rb.Range(0, size)
	}
	presented, err := v.sc.Present(ctx, desc)
	if presented {
		v.layout = l
	}
	return presented, err
}

// capture reads the last frame back: from the X server where it can (the
// window as shown), and from the swapchain image; with Check it compares
// both with the CPU reference, and it writes Screenshot.
func (v *viewer) capture(ctx context.Context, res *Result) error {
	l := v.layout
	if l.Width == 0 {
		return errors.New("no frame was presented")
	}
	pix := make([]byte, l.Width*l.Height*4)
	if err := v.rb.Read(ctx, 0, pix); err != nil {
		return err
	}
	shot, err := panels.FromPixels(pix, l.Width, l.Height, v.sc.PixelOrder())
	if err != nil {
		return err
	}
	var want *image.RGBA
	if v.cfg.Check {
		y, dx, err := v.r.Reference()
		if err != nil {
			return err
		}
		_, x := v.r.Input()
		if want, err = panels.Compose(l, x, y, dx); err != nil {
			return err
		}
		m, err := panels.Compare(l, shot, want, Tolerance)
		if err != nil {
			return err
		}
		res.Swapchain = &m
	}
	res.Source = "swapchain"
	// The X server may show the frame a little after vkQueuePresentKHR
	// returns: present it again until the window has it.
	for try := 0; try < 20; try++ {
		if err := v.dev.WaitIdle(ctx); err != nil {
			return err
		}
		win, err := grabWindow(v.win, l.Width, l.Height)
		if err != nil {
			v.logf("window capture: %v (using the swapchain image)", err)
			break
		}
		res.Source = "x11"
		if want == nil {
			shot = win
			break
		}
		m, err := panels.Compare(l, win, want, Tolerance)
		if err != nil {
			return err
		}
		res.Window = &m
		shot = win
		if m.Pixels == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
		glfw.PollEvents()
		if _, err := v.draw(ctx); err != nil {
			return err
		}
	}
	if v.cfg.Screenshot != "" {
		if err := writePNG(v.cfg.Screenshot, shot); err != nil {
			return err
		}
	}
	return nil
}

func writePNG(path string, im image.Image) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return png.Encode(f, im)
}

func (v *viewer) close() {
	v.rb.Close()
	v.r.Close()
	v.sc.Close()
}
