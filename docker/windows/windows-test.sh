#!/bin/sh
# docker/windows/windows-test.sh [test binary flags...]: `make windows-test`.
# From the repo root: stages the Windows test binaries, vkmps.exe and what
# the tests read (docker/windows/stage.sh), makes sure the trixie root
# exists (docker/windows/root.sh) and runs docker/windows/run-tests in it
# under Wine: in a container (--network none) when a Docker engine
# answers, else in a chroot (root only). The stage is mounted read-only at
# /opt/vkmps, $WT_DIR/.out at /out (the logs, devices.json).
#
#   WT_MODE     docker, chroot or auto (default: docker where `docker info` works)
#   WT_DIR      where .stage, .out and the chroot's .root go (docker/windows; git-ignored)
#   WT_TIMEOUT  per test binary (default 20m); LP_NUM_THREADS and VKMPS_DEVICE pass on
set -eu
GO=${GO:-go}
DOCKER=${DOCKER:-docker}
dir=${WT_DIR:-docker/windows}
case $dir in /*) ;; *) dir=$(pwd -P)/$dir ;; esac
stage=$dir/.stage
out=$dir/.out
mode=${WT_MODE:-auto}
if [ "$mode" = auto ]; then
	if "$DOCKER" info >/dev/null 2>&1; then mode=docker; else mode=chroot; fi
fi
log() { echo "windows-test: $*" >&2; }
start=$(date +%s)

command -v "${WINDOWS_CC:-x86_64-w64-mingw32-gcc}" >/dev/null 2>&1 ||
	{ log "no mingw-w64 C compiler: make deps-windows (apt-get install gcc-mingw-w64-x86-64)"; exit 1; }
GO="$GO" sh docker/windows/stage.sh "$stage"
built=$(date +%s)
root=$(WINE_ROOT="$dir/.root/trixie" DOCKER="$DOCKER" sh docker/windows/root.sh "$mode")
ready=$(date +%s)
rm -rf "$out"
mkdir -p "$out"
log "stage $((built - start))s, root ($mode: $root) $((ready - built))s; running the tests under Wine"

rc=0
case $mode in
docker)
	# Wine's temporary folder (t.TempDir) on a tmpfs and Mesa's shader
	# cache kept in $WT_DIR/.cache: on the image's overlay (fuse-overlayfs
	# here) cmd/vkmps's TestPoolAgreesWithPyTorch (serial, no validation)
	# took 530 s, with both 150 s with a cold cache, as in a chroot (158 s
	# cold, 34 s warm).
	mkdir -p "$dir/.cache"
	"$DOCKER" run --rm --network none -v "$stage:/opt/vkmps:ro" -v "$out:/out" -v "$dir/.cache:/root/.cache" \
		--tmpfs /opt/wine/drive_c/users/root/AppData/Local/Temp:exec \
		-e LP_NUM_THREADS -e VKMPS_DEVICE -e WT_TIMEOUT -e "WT_LOGS=$out/logs" "$root" sh /opt/vkmps/run-tests "$@" || rc=$?
	;;
chroot)
	[ "$(id -u)" = 0 ] || { log "the chroot needs root (or a Docker engine: WT_MODE=docker)"; exit 1; }
	r=$(cd "$root" && pwd -P)
	. "$(dirname "$0")/../trixie.sh"
	chroot_enter "$r"
	chroot_bind "$stage" /opt/vkmps ro
	chroot_bind "$out" /out
	chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root WINEPREFIX=/opt/wine \
		${LP_NUM_THREADS:+LP_NUM_THREADS=$LP_NUM_THREADS} ${VKMPS_DEVICE:+VKMPS_DEVICE=$VKMPS_DEVICE} \
		${WT_TIMEOUT:+WT_TIMEOUT=$WT_TIMEOUT} "WT_LOGS=$out/logs" sh /opt/vkmps/run-tests "$@" || rc=$?
	;;
esac
log "done in $(($(date +%s) - start))s (stage $((built - start))s, root $((ready - built))s, tests $(($(date +%s) - ready))s); logs in $out/logs"
exit $rc
