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
BIN      := bin

.PHONY: help deps deps-windows shaders shaders-check test test-short demo build cross-windows lint

help:
	@echo "targets:"
	@echo "  demo           run the pooling demo on the default Vulkan device"
	@echo "  test           install missing Debian packages, run all tests with validation"
	@echo "  deps           install (or name) the Debian packages vkmps needs"
	@echo "  shaders        compile glsl/*.comp to spirv/*.spv and regenerate spirv/shaders_gen.go"
	@echo "  shaders-check  fail when a committed .spv differs from its source"
	@echo "  build          build bin/vkmps"
	@echo "  cross-windows  cgo cross-build of bin/vkmps.exe with mingw-w64"
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

shaders: deps
	$(GO) run ./spirv/internal/spvgen

shaders-check: deps
	$(GO) run ./spirv/internal/spvgen -check

# Every test, with the validation layer (and synchronization validation) on;
# a missing Vulkan device is a failure here, not a skip.
test: deps
	VKMPS_VALIDATION=1 VKMPS_REQUIRE_DEVICE=1 $(GO) test -count=1 ./...

# The same without validation, for a quick loop.
test-short:
	$(GO) test ./...

build:
	$(GO) build -o $(BIN)/vkmps ./cmd/vkmps

demo: deps
	$(GO) run ./cmd/vkmps demo

cross-windows: deps-windows
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc \
	  $(GO) build -o $(BIN)/vkmps.exe ./cmd/vkmps
	@file $(BIN)/vkmps.exe 2>/dev/null || ls -l $(BIN)/vkmps.exe

lint:
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...

-include docker/docker.mk
