# Docker targets for vkmps; included from the top-level Makefile (paths are relative
# to the repo root). See docker/README.md.
#
#   make docker-test     build the image and run every package's tests on lavapipe,
#                        with the validation layer on, as a non-root user, no network
#   make docker-demo     run `vkmps demo` in the image
#   make docker-run ARGS="selfcheck"   run `vkmps ARGS` in the image
#   make docker-shell    interactive shell in the image
#   make docker-image    build vkmps/vkmps:test (runtime + test binaries + testdata)
#   make docker-runtime  build vkmps/runtime:bookworm (loader, lavapipe, layers, user)
#   make docker-base     make sure a bookworm base image exists (pull, else debootstrap)
#   make docker-stage    build the test binaries and vkmps into docker/.stage only
#   make docker-clean    remove docker/.stage and the two images above
#   make docker-clean-base   also remove the locally built base image

# Included files must not change the includer's default goal.
_docker_saved_default_goal := $(.DEFAULT_GOAL)

GO ?= go
DOCKER ?= docker
# Empty: debian:bookworm-slim if present or pullable, else a local debootstrap image.
DOCKER_BASE ?=
DOCKER_LOCAL_BASE ?= vkmps/debian:bookworm
DEBIAN_MIRROR ?= http://deb.debian.org/debian
DEBIAN_SECURITY_MIRROR ?= http://deb.debian.org/debian-security
# e.g. libvulkan1,mesa-vulkan-drivers,vulkan-validationlayers,libxext6,libegl1 when builds have no network
DEBOOTSTRAP_INCLUDE ?=
DOCKER_RUNTIME_IMAGE ?= vkmps/runtime:bookworm
DOCKER_IMAGE ?= vkmps/vkmps:test
DOCKER_STAGE ?= docker/.stage
# Extra `docker build` flags (e.g. --network none, --build-arg http_proxy=...).
DOCKER_BUILD_FLAGS ?=
# Extra `docker run` flags (e.g. --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics).
DOCKER_RUN_FLAGS ?=
# Flags for every test binary, e.g. DOCKER_TEST_ARGS="-test.v -test.run=Pool".
DOCKER_TEST_ARGS ?=
ARGS ?=
# Mesa's shader cache for the tests in the container (lavapipe compiles each
# pipeline with LLVM, most of the suite's time with a cold cache): a folder
# here, mounted at /cache/mesa (MESA_SHADER_CACHE_DIR), seeded from this
# machine's own cache that `make test` filled. Mesa keeps its files in a
# folder mesa_shader_cache under MESA_SHADER_CACHE_DIR, else under
# XDG_CACHE_HOME or ~/.cache, on both sides: HOST_SHADER_CACHE and
# _DOCKER_CACHE_FILES are those folders (seeding the mount's top level, as
# until 2026-12, left the container cold). Entries are keyed by the
# driver's build and the shader, so a different Mesa only misses.
# DOCKER_SHADER_CACHE= turns it off.
DOCKER_SHADER_CACHE ?= docker/.cache/mesa
HOST_SHADER_CACHE ?= $(or $(MESA_SHADER_CACHE_DIR),$(or $(XDG_CACHE_HOME),$(HOME)/.cache))/mesa_shader_cache
_DOCKER_CACHE_FILES = $(DOCKER_SHADER_CACHE)/mesa_shader_cache

_DOCKER_BASE_ENV = DOCKER='$(DOCKER)' DOCKER_BASE='$(DOCKER_BASE)' \
	DOCKER_LOCAL_BASE='$(DOCKER_LOCAL_BASE)' DEBIAN_MIRROR='$(DEBIAN_MIRROR)' \
	DEBIAN_SECURITY_MIRROR='$(DEBIAN_SECURITY_MIRROR)' DEBOOTSTRAP_INCLUDE='$(DEBOOTSTRAP_INCLUDE)'
# make test's environment (TEST_ENV) and make check's race runs (CHECK_RUN over
# race builds of CHECK_PKGS), from the Makefile, so that both run the same tests.
TEST_ENV ?= VKMPS_VALIDATION=1 VKMPS_REQUIRE_DEVICE=1
CHECK_PKGS ?= ./vk ./ops ./graph
# The longest one test binary may run: make test's TEST_TIMEOUT unless the
# environment sets VKMPS_TEST_TIMEOUT.
TEST_TIMEOUT ?= 45m
VKMPS_TEST_TIMEOUT ?= $(TEST_TIMEOUT)
_DOCKER_RUN = $(DOCKER) run --rm --network none $(foreach v,$(TEST_ENV),-e $(v)) -e LP_NUM_THREADS \
	-e VKMPS_TEST_TIMEOUT='$(VKMPS_TEST_TIMEOUT)' -e VKMPS_DEVICE $(DOCKER_RUN_FLAGS)
_DOCKER_CACHE_FLAGS = $(if $(DOCKER_SHADER_CACHE),-v '$(abspath $(DOCKER_SHADER_CACHE))':/cache/mesa -e MESA_SHADER_CACHE_DIR=/cache/mesa)

.PHONY: _docker-need-vkmps docker-check docker-base docker-stage docker-runtime docker-image docker-test \
	docker-demo docker-run docker-shell docker-clean docker-clean-base docker-shader-cache

docker-check:
	@$(DOCKER) info >/dev/null 2>&1 || { echo "docker: no Docker engine answers ('$(DOCKER) info' fails)" >&2; exit 1; }

docker-base: docker-check
	@base=$$($(_DOCKER_BASE_ENV) sh docker/base.sh) && echo "docker base image: $$base"

docker-stage:
	@GO='$(GO)' VKMPS_RACE_PKGS='$(CHECK_PKGS)' sh docker/stage.sh '$(DOCKER_STAGE)'

# The runtime stage needs no build context, so it is built from the Dockerfile alone.
docker-runtime: docker-check
	@base=$$($(_DOCKER_BASE_ENV) sh docker/base.sh) && echo "docker base image: $$base" && \
	$(DOCKER) build $(DOCKER_BUILD_FLAGS) --build-arg BASE="$$base" --target runtime -t '$(DOCKER_RUNTIME_IMAGE)' - < docker/Dockerfile

docker-image: docker-runtime docker-stage
	@base=$$($(_DOCKER_BASE_ENV) sh docker/base.sh) && \
	$(DOCKER) build $(DOCKER_BUILD_FLAGS) --build-arg BASE="$$base" --target test -t '$(DOCKER_IMAGE)' \
		-f docker/Dockerfile '$(DOCKER_STAGE)'
	@# Drop the previous test image that the new tag replaced (only dangling ones with our label).
	@$(DOCKER) image prune -f --filter label=org.vkmps.image=test >/dev/null

# Every test as make test runs them (TEST_ENV; CHECK_RUN under the race
# detector), failing when a test skips (docker/allowed-skips aside) or none runs.
docker-test: docker-image docker-shader-cache
	$(_DOCKER_RUN) $(_DOCKER_CACHE_FLAGS) -e VKMPS_RACE_RUN='$(CHECK_RUN)' '$(DOCKER_IMAGE)' vkmps-run-tests $(DOCKER_TEST_ARGS)

# The container's user (uid 10001) writes the cache, so it is world-writable;
# cp -n adds the host's entries without overwriting the folder's own.
docker-shader-cache:
	@if [ -n '$(DOCKER_SHADER_CACHE)' ]; then \
		mkdir -p '$(_DOCKER_CACHE_FILES)' && \
		if [ -d '$(HOST_SHADER_CACHE)' ]; then cp -Rn '$(HOST_SHADER_CACHE)'/. '$(_DOCKER_CACHE_FILES)'/ 2>/dev/null || true; fi && \
		chmod -R a+rwX '$(DOCKER_SHADER_CACHE)' && \
		echo "docker shader cache: $(DOCKER_SHADER_CACHE) ($$(du -sh '$(DOCKER_SHADER_CACHE)' | cut -f1), seeded from $(HOST_SHADER_CACHE))"; \
	fi

_docker-need-vkmps:
	@ls cmd/vkmps/*.go >/dev/null 2>&1 || { echo "docker: cmd/vkmps does not exist yet, so there is no vkmps binary to run" >&2; exit 1; }

docker-demo: _docker-need-vkmps docker-image
	$(_DOCKER_RUN) '$(DOCKER_IMAGE)' vkmps demo $(ARGS)

docker-run: _docker-need-vkmps docker-image
	$(_DOCKER_RUN) '$(DOCKER_IMAGE)' vkmps $(ARGS)

docker-shell: docker-image
	$(_DOCKER_RUN) -it '$(DOCKER_IMAGE)' bash

docker-clean:
	rm -rf '$(DOCKER_STAGE)' '$(DOCKER_SHADER_CACHE)'
	-$(DOCKER) rmi '$(DOCKER_IMAGE)' '$(DOCKER_RUNTIME_IMAGE)' 2>/dev/null

docker-clean-base: docker-clean
	-$(DOCKER) rmi '$(DOCKER_LOCAL_BASE)' 2>/dev/null

.DEFAULT_GOAL := $(_docker_saved_default_goal)
