#!/bin/sh
# docker/windows/root.sh MODE: makes sure the Debian trixie root that
# `make windows-test` runs Windows programs in exists, building it when it
# does not, and prints where it is on stdout (everything else goes to stderr).
#
#   MODE docker: the image $WINE_IMAGE (vkmps/wine:trixie), made with
#                `docker import` (no registry); prints the image name.
#   MODE chroot: the directory $WINE_ROOT (docker/windows/.root/trixie);
#                prints its path.
#
# Either is kept and reused while its stamp (the hash of this script and the
# mirror) matches; `make windows-clean` removes both. The root is
# `debootstrap --variant=minbase trixie` plus wine64 (Wine 10, 64-bit only:
# no i386 architecture), mesa-vulkan-drivers (lavapipe, Mesa 25), libvulkan1
# and vulkan-validationlayers (the Linux layer: winevulkan takes no layers
# from Windows programs, see README.md, Windows), with a Wine prefix made
# once in /opt/wine. Needs root (debootstrap, chroot); installs debootstrap
# with apt-get when missing.
set -eu

mode=${1:?usage: docker/windows/root.sh docker|chroot}
DOCKER=${DOCKER:-docker}
IMAGE=${WINE_IMAGE:-vkmps/wine:trixie}
ROOT=${WINE_ROOT:-docker/windows/.root/trixie}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
PKGS="wine64 mesa-vulkan-drivers libvulkan1 vulkan-validationlayers"

log() { echo "docker/windows/root.sh: $*" >&2; }
lib=$(dirname "$0")/../trixie.sh
. "$lib"
stamp=$( (cat "$0" "$lib"; echo "$MIRROR $SECURITY_MIRROR") | sha256sum | cut -c1-16)

case $mode in
docker)
	have=$("$DOCKER" image inspect -f '{{index .Config.Labels "org.vkmps.wine-root"}}' "$IMAGE" 2>/dev/null || true)
	if [ "$have" = "$stamp" ]; then echo "$IMAGE"; exit 0; fi
	[ -z "$have" ] || log "$IMAGE is out of date (stamp $have, want $stamp): rebuilding"
	;;
chroot)
	if [ "$(cat "$ROOT/.vkmps-stamp" 2>/dev/null)" = "$stamp" ]; then echo "$ROOT"; exit 0; fi
	;;
*) log "unknown mode $mode (want docker or chroot)"; exit 2 ;;
esac

trixie_prereqs
trixie_tmp "${TMPDIR:-/var/tmp}" vkmps-wine-root

start=$(date +%s)
log "debootstrap --variant=minbase trixie from $MIRROR ..."
trixie_bootstrap "$r" "$MIRROR" "$tmp/log" "deb $MIRROR trixie main" "deb $MIRROR trixie-updates main" \
	"deb $SECURITY_MIRROR trixie-security main"
log "apt-get install $PKGS ($(($(date +%s) - start))s) ..."
if ! chroot "$r" env DEBIAN_FRONTEND=noninteractive sh -c \
	"apt-get update -qq && apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends $PKGS" >"$tmp/log" 2>&1; then
	tail -n 20 "$tmp/log" >&2
	log "apt-get install failed"; exit 1
fi
log "wineboot: a Wine prefix in /opt/wine ($(($(date +%s) - start))s) ..."
mkdir -p "$r/opt/wine" "$r/tmp/xdg"
chmod 0700 "$r/tmp/xdg"
if ! chroot "$r" env HOME=/root WINEPREFIX=/opt/wine WINEDEBUG=-all XDG_RUNTIME_DIR=/tmp/xdg sh -c \
	'/usr/lib/wine/wine64 wineboot --init && /usr/lib/wine/wineserver -w' >"$tmp/log" 2>&1; then
	tail -n 20 "$tmp/log" >&2
	log "wineboot failed"; exit 1
fi
trixie_unmount "$r"
rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/cache/apt/*.bin "$r"/var/lib/apt/lists/* \
	"$r"/var/log/*.log "$r/etc/resolv.conf" "$r/etc/hostname" "$r"/tmp/xdg/* 2>/dev/null || true
versions=$(chroot "$r" dpkg-query -W -f '${Package} ${Version}, ' wine64 mesa-vulkan-drivers libvulkan1 vulkan-validationlayers)
echo "$stamp" >"$r/.vkmps-stamp"

case $mode in
docker)
	tar --numeric-owner -C "$r" -c . | "$DOCKER" import \
		-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		-c 'ENV HOME=/root WINEPREFIX=/opt/wine WINEDEBUG=-all XDG_RUNTIME_DIR=/tmp/xdg' \
		-c "LABEL org.vkmps.wine-root=$stamp" \
		-c 'CMD ["bash"]' \
		-m "debootstrap --variant=minbase trixie $MIRROR + $PKGS" - "$IMAGE" >/dev/null
	log "built $IMAGE in $(($(date +%s) - start))s: ${versions%, }"
	echo "$IMAGE"
	;;
chroot)
	rm -rf --one-file-system "$ROOT"
	mkdir -p "$(dirname "$ROOT")"
	mv "$r" "$ROOT"
	log "built $ROOT in $(($(date +%s) - start))s: ${versions%, }"
	echo "$ROOT"
	;;
esac
