# docker/trixie.sh: shell functions for the Debian trixie roots, sourced by
# docker/windows/root.sh and docker/coopmat/root.sh (building one; their
# stamps hash this file too) and by docker/windows/windows-test.sh and
# docker/coopmat/coopmat-test.sh (running in one as a chroot). The sourcing
# script defines log (a message to stderr) and runs as root.
#
#   trixie_prereqs                     debootstrap and debian-archive-keyring, installed
#                                      with apt-get when missing; exits 1 unless root
#   trixie_bootstrap R MIRROR LOG LINE...
#                                      debootstrap --variant=minbase trixie into R, its
#                                      sources.list the LINEs, resolv.conf copied, /proc and
#                                      /dev mounted (trixie_unmount R undoes them); exits 1
#                                      with the end of LOG when debootstrap fails
#   trixie_unmount DIR                 lazily unmounts everything mounted below DIR
#   trixie_tmp PARENT PREFIX           a new folder tmp=PARENT/PREFIX.XXXXXX for a build, r=$tmp/root,
#                                      and traps that unmount below r and remove tmp on exit
#   chroot_enter R                     mounts /proc and /dev in R for a chroot, and sets
#                                      traps that run chroot_leave on exit
#   chroot_bind SRC DST [ro]           binds SRC at R/DST (read-only with ro)
#   chroot_leave                       unmounts what chroot_enter and chroot_bind mounted

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

trixie_prereqs() {
	if [ "$(id -u)" != 0 ]; then
		log "building the trixie root needs root (debootstrap, chroot)"; exit 1
	fi
	if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
		log "installing debootstrap with apt-get"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2 ||
			{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2; }
	fi
	if [ ! -r "$KEYRING" ]; then
		log "installing debian-archive-keyring with apt-get"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debian-archive-keyring >&2 ||
			{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debian-archive-keyring >&2; }
	fi
}

trixie_bootstrap() {
	_r=$1 _mirror=$2 _log=$3
	shift 3
	if ! debootstrap --variant=minbase --keyring="$KEYRING" trixie "$_r" "$_mirror" >"$_log" 2>&1; then
		tail -n 20 "$_log" >&2
		log "debootstrap failed (building in $_r)"; exit 1
	fi
	printf '%s\n' "$@" >"$_r/etc/apt/sources.list"
	cp /etc/resolv.conf "$_r/etc/resolv.conf" 2>/dev/null || true
	mount -t proc proc "$_r/proc"
	mount --rbind /dev "$_r/dev"
	mount --make-rslave "$_r/dev"
}

trixie_unmount() {
	for _m in $(awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$_m" 2>/dev/null || true
	done
}

trixie_tmp() {
	tmp=$(mktemp -d "$1/$2.XXXXXX")
	r=$tmp/root
	trap 'trixie_unmount "$r"; rm -rf --one-file-system "$tmp"' EXIT
	trap 'exit 1' INT TERM
}

chroot_mounted=""
chroot_enter() {
	chroot_r=$1
	trap chroot_leave EXIT
	trap 'exit 1' INT TERM
	mount -t proc proc "$chroot_r/proc" && chroot_mounted="$chroot_r/proc"
	mount --rbind /dev "$chroot_r/dev" && mount --make-rslave "$chroot_r/dev" && chroot_mounted="$chroot_r/dev $chroot_mounted"
}

chroot_bind() {
	mkdir -p "$chroot_r$2"
	mount --bind "$1" "$chroot_r$2"
	chroot_mounted="$chroot_r$2 $chroot_mounted"
	[ "${3:-}" != ro ] || mount -o remount,bind,ro "$chroot_r$2"
}

chroot_leave() {
	for _m in $chroot_mounted; do umount -l "$_m" 2>/dev/null || true; done
	chroot_mounted=""
}
