#!/bin/sh
# docker/coopmat/coopmat-test.sh: `make coopmat-test`. From the repo root:
# stages the Linux test binaries of ops and vk and what their tests read
# (docker/coopmat/stage.sh), makes sure the trixie root exists
# (docker/coopmat/root.sh: Mesa 26 lavapipe, whose CPU device has
# VK_KHR_cooperative_matrix) and runs docker/coopmat/run-tests in it: in a
# container (--network none; the root imported once as $COOPMAT_IMAGE) when
# a Docker engine answers, else in a chroot (root only). The stage is
# mounted read-only at /opt/vkmps, $COOPMAT_DIR/.out at /out (the logs) and
# $COOPMAT_DIR/.cache at /cache (Mesa's shader cache, kept between runs).
#
#   COOPMAT_MODE     docker, chroot or auto (default: docker where `docker info` works)
#   COOPMAT_DIR      where .stage, .out and .cache go (docker/coopmat; git-ignored)
#   COOPMAT_ROOT     the root (docker/coopmat/.root/trixie, see root.sh)
#   COOPMAT_IMAGE    the Docker image of the root (vkmps/coopmat:trixie)
#   COOPMAT_RUN      the tests, a -test.run pattern for each package (default Coop)
#   COOPMAT_SKIP     a -test.skip pattern (default /emulated: the emulated builds' subtests, which
#                    make test and docker-test run; set it to a pattern that matches nothing to run them too)
#   COOPMAT_TIMEOUT  per test binary (default 30m); LP_NUM_THREADS passes on
#   COOPMAT_PKGS     the packages (default ./ops ./vk)
set -eu
GO=${GO:-go}
DOCKER=${DOCKER:-docker}
IMAGE=${COOPMAT_IMAGE:-vkmps/coopmat:trixie}
dir=${COOPMAT_DIR:-docker/coopmat}
case $dir in /*) ;; *) dir=$(pwd -P)/$dir ;; esac
stage=$dir/.stage
out=$dir/.out
cache=$dir/.cache
mode=${COOPMAT_MODE:-auto}
run=${COOPMAT_RUN:-Coop}
skip=${COOPMAT_SKIP-/emulated}
timeout=${COOPMAT_TIMEOUT:-30m}
if [ "$mode" = auto ]; then
	if "$DOCKER" info >/dev/null 2>&1; then mode=docker; else mode=chroot; fi
fi
log() { echo "coopmat-test: $*" >&2; }
case $mode in docker | chroot) ;; *) log "unknown COOPMAT_MODE=$mode (want docker, chroot or auto)"; exit 2 ;; esac
[ "$mode" = docker ] || [ "$(id -u)" = 0 ] ||
	{ log "the chroot needs root (or a Docker engine: COOPMAT_MODE=docker)"; exit 1; }
start=$(date +%s)

GO="$GO" sh docker/coopmat/stage.sh "$stage"
built=$(date +%s)
root=$(sh docker/coopmat/root.sh)
if [ "$mode" = docker ]; then
	want=$(cat "$root/.vkmps-stamp")
	have=$("$DOCKER" image inspect -f '{{index .Config.Labels "org.vkmps.coopmat-root"}}' "$IMAGE" 2>/dev/null || true)
	if [ "$have" != "$want" ]; then
		log "docker import $root as $IMAGE (stamp $want) ..."
		old=$("$DOCKER" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
		# --one-file-system: not into a chroot run's /proc or /dev.
		tar --numeric-owner --one-file-system -C "$root" -c . | "$DOCKER" import \
			-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
			-c 'ENV HOME=/root' \
			-c "LABEL org.vkmps.coopmat-root=$want" \
			-c 'CMD ["bash"]' \
			-m "docker/coopmat/root.sh: $root" - "$IMAGE" >/dev/null
		[ -z "$old" ] || "$DOCKER" rmi "$old" >/dev/null 2>&1 || true
	fi
	root=$IMAGE
fi
ready=$(date +%s)
rm -rf "$out"
mkdir -p "$out" "$cache"
log "stage $((built - start))s, root ($mode: $root) $((ready - built))s; running -test.run '$run' on lavapipe"

rc=0
case $mode in
docker)
	"$DOCKER" run --rm --network none -v "$stage:/opt/vkmps:ro" -v "$out:/out" -v "$cache:/cache" \
		-e VKMPS_VALIDATION=1 -e VKMPS_REQUIRE_DEVICE=1 -e HOME=/root -e MESA_SHADER_CACHE_DIR=/cache \
		-e LP_NUM_THREADS -e "COOPMAT_RUN=$run" -e "COOPMAT_SKIP=$skip" -e "COOPMAT_TIMEOUT=$timeout" -e "COOPMAT_LOGS=$out/logs" \
		"$root" sh /opt/vkmps/run-tests || rc=$?
	;;
chroot)
	r=$(cd "$root" && pwd -P)
	. "$(dirname "$0")/../trixie.sh"
	chroot_enter "$r"
	chroot_bind "$stage" /opt/vkmps ro
	chroot_bind "$out" /out
	chroot_bind "$cache" /cache
	chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root VKMPS_VALIDATION=1 VKMPS_REQUIRE_DEVICE=1 \
		MESA_SHADER_CACHE_DIR=/cache ${LP_NUM_THREADS:+LP_NUM_THREADS=$LP_NUM_THREADS} \
		"COOPMAT_RUN=$run" "COOPMAT_SKIP=$skip" "COOPMAT_TIMEOUT=$timeout" \
		"COOPMAT_LOGS=$out/logs" sh /opt/vkmps/run-tests || rc=$?
	;;
esac
log "done in $(($(date +%s) - start))s (stage $((built - start))s, root $((ready - built))s, tests $(($(date +%s) - ready))s); logs in $out/logs"
exit $rc
