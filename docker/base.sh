#!/bin/sh
# Picks (and if need be makes) the Debian bookworm base image for docker/Dockerfile
# and prints its name on stdout; everything else goes to stderr.
#
#   1. $DOCKER_BASE if set (pulled when missing).
#   2. debian:bookworm-slim if the engine already has it.
#   3. $DOCKER_LOCAL_BASE (vkmps/debian:bookworm) if an earlier run built it.
#   4. docker pull debian:bookworm-slim.
#   5. Otherwise: debootstrap --variant=minbase bookworm from $DEBIAN_MIRROR and
#      docker import it as $DOCKER_LOCAL_BASE (needs root or password-less sudo;
#      installs debootstrap with apt-get when missing).
#
# $DEBOOTSTRAP_INCLUDE (comma-separated packages) is passed to debootstrap --include,
# e.g. "libvulkan1,mesa-vulkan-drivers,vulkan-validationlayers,libxext6,libegl1" for engines whose
# builds have no network: the Dockerfile then skips apt-get.
set -eu

DOCKER=${DOCKER:-docker}
UPSTREAM=debian:bookworm-slim
LOCAL=${DOCKER_LOCAL_BASE:-vkmps/debian:bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
PULL_TIMEOUT=${DOCKER_PULL_TIMEOUT:-120}

log() { echo "docker/base.sh: $*" >&2; }
have() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }
pull() {
	if out=$(timeout "$PULL_TIMEOUT" "$DOCKER" pull -q "$1" 2>&1); then return 0; fi
	log "docker pull $1 failed: $(echo "$out" | tail -n 1)"; return 1
}

if [ -n "${DOCKER_BASE:-}" ]; then
	have "$DOCKER_BASE" || pull "$DOCKER_BASE" || { log "cannot pull DOCKER_BASE=$DOCKER_BASE"; exit 1; }
	echo "$DOCKER_BASE"; exit 0
fi
if have "$UPSTREAM"; then echo "$UPSTREAM"; exit 0; fi
if have "$LOCAL"; then echo "$LOCAL"; exit 0; fi
log "pulling $UPSTREAM ..."
if pull "$UPSTREAM"; then echo "$UPSTREAM"; exit 0; fi

log "cannot pull $UPSTREAM: building $LOCAL locally with debootstrap from $MIRROR"
SUDO=
if [ "$(id -u)" != 0 ]; then
	if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
		log "debootstrap needs root: run as root, set up password-less sudo, or set DOCKER_BASE"; exit 1
	fi
fi
if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
	log "installing debootstrap with apt-get"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2 ||
		{ $SUDO apt-get update -q >&2 && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2; }
fi
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
if [ ! -r "$KEYRING" ]; then
	log "installing debian-archive-keyring with apt-get"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q debian-archive-keyring >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/vkmps-debootstrap.XXXXXX")
cleanup() {
	# Unmount anything debootstrap may have left mounted, then never cross into another fs.
	for m in $(awk -v d="$tmp/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
		$SUDO umount -l "$m" 2>/dev/null || true
	done
	$SUDO rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

start=$(date +%s)
include=${DEBOOTSTRAP_INCLUDE:+--include=$DEBOOTSTRAP_INCLUDE}
# shellcheck disable=SC2086 # $include is one word or nothing
if ! $SUDO debootstrap --variant=minbase --keyring="$KEYRING" $include bookworm "$tmp/root" "$MIRROR" >"$tmp/log" 2>&1; then
	tail -n 20 "$tmp/log" >&2
	log "debootstrap failed (full log was $tmp/log)"; exit 1
fi
r=$tmp/root
$SUDO sh -c "
	printf '%s\n' 'deb $MIRROR bookworm main' 'deb $MIRROR bookworm-updates main' \
		'deb $SECURITY_MIRROR bookworm-security main' > '$r/etc/apt/sources.list'
	rm -rf '$r'/var/cache/apt/archives/*.deb '$r'/var/cache/apt/*.bin '$r'/var/lib/apt/lists/* '$r'/var/log/*.log
	rm -f '$r/etc/resolv.conf' '$r/etc/hostname'
"
$SUDO tar --numeric-owner -C "$r" -c . | "$DOCKER" import \
	-c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	-c 'CMD ["bash"]' \
	-m "debootstrap --variant=minbase bookworm $MIRROR${include:+ $include}" - "$LOCAL" >/dev/null
log "built $LOCAL with debootstrap in $(($(date +%s) - start))s (kept; 'make docker-clean-base' removes it)"
echo "$LOCAL"
